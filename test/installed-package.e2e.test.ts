/**
 * The bridge as an author gets it: every publishable package packed, installed with plain npm
 * into a project outside the workspace, and run through its installed `eve-flue-bridge`.
 * One install serves every test here (it is the slow part: the registry).
 */
import { execFile } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { collect } from './support/events.ts';
import type { Listening } from './support/listen.ts';
import { startToolServers } from './support/tool-servers.ts';

const run = promisify(execFile);
const workspace = fileURLToPath(new URL('..', import.meta.url));
const versionOf = (file: string, name: string): string =>
  (JSON.parse(readFileSync(join(workspace, file), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[name]!;

// npm and the package scripts it runs find this Node (24) first.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` };

const CONFIG = `import { useModel } from '@flue/runtime';
import { defineBridgeConfig, defineFlueConnection } from '@eve-flue/bridge';
import { scriptedModel } from '@eve-flue/bridge/testing';

const model = scriptedModel();

export function Helper(): string {
  useModel(model.model);
  return 'You help.';
}
Helper.agentName = 'helper';

export default defineBridgeConfig({
  agent: Helper,
  providers: [model.provider],
  connections: [defineFlueConnection({ name: 'tiny', url: process.env.TOOLS_URL! })],
});
`;

let packs: string;
let project: string;
let tools: Listening;
let bin: string;
const bridges: CliBridge[] = [];

beforeAll(async () => {
  [packs, project, tools] = await Promise.all([mkdtemp(join(tmpdir(), 'eve-flue-packs-')), mkdtemp(join(tmpdir(), 'eve-flue-author-')), startToolServers()]);
  // `prepack` builds each package; one at a time, since a package's build also builds what it references.
  await run('npx', ['-y', 'pnpm@10.18.0', '-r', '--workspace-concurrency=1', '--filter', './packages/*', '--filter', './apps/*', 'pack', '--pack-destination', packs], { cwd: workspace, env });
  // The author installs the bridge, not the demo (which carries its own OAuth server).
  const tarballs = (await readdir(packs)).filter((name) => !name.startsWith('eve-flue-demo-')).map((name) => join(packs, name));
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'author-project', private: true, type: 'module' }));
  // TypeScript and Node's types, as an author who type-checks the config has them.
  const authorTools = ['typescript', '@types/node'].map((name) => `${name}@${versionOf('package.json', name)}`);
  await run('npm', ['install', '--no-audit', '--no-fund', ...tarballs, `@flue/runtime@${versionOf('package.json', '@flue/runtime')}`, `eve@${versionOf('package.json', 'eve')}`, ...authorTools], { cwd: project, env });
  await writeFile(join(project, 'bridge.config.ts'), CONFIG);
  bin = join(project, 'node_modules', '.bin', 'eve-flue-bridge'); // what `npx eve-flue-bridge` runs
}, 600_000);

afterAll(async () => {
  await Promise.all(bridges.map((bridge) => bridge.stop()));
  await tools?.close();
  await Promise.all([packs, project].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function start(dataDir: string): Promise<CliBridge> {
  const bridge = await startCliBridge({ DATA_DIR: dataDir, TOOLS_URL: `${tools.url}/mcp/echo` }, ['start'], { bin, cwd: project });
  bridges.push(bridge);
  return bridge;
}

test('the project is outside the workspace, and what was packed is built JavaScript with real version ranges', async () => {
  expect(relative(workspace, project).startsWith('..')).toBe(true);
  const installed = JSON.parse(readFileSync(join(project, 'node_modules/@eve-flue/bridge/package.json'), 'utf8'));
  expect(installed.private).toBeUndefined();
  expect(installed.engines).toEqual({ node: '>=24' });
  expect(installed.exports['./testing']).toEqual({ types: './dist/testing.d.ts', import: './dist/testing.js' });
  expect(installed.bin).toEqual({ 'eve-flue-bridge': './dist/bin.js' });
  expect(installed.dependencies['@eve-flue/compat-server']).toMatch(/^\^\d+\.\d+\.\d+$/);
  expect(globSync('node_modules/@eve-flue/*/src', { cwd: project })).toEqual([]);
});

test('a production install of the bridge has no demo: no oidc-provider, and jose only for route auth', () => {
  expect(globSync('node_modules/**/oidc-provider', { cwd: project })).toEqual([]);
  expect(globSync('node_modules/@eve-flue/demo', { cwd: project })).toEqual([]);
  // jose arrives through openid-client (the OAuth client) and Vercel's OIDC helper, and is
  // compat-server's own for route auth (oidc, jwtHmac, jwtEcdsa): no other package of ours needs it.
  const ours = globSync('node_modules/@eve-flue/*/package.json', { cwd: project }).map((file) => JSON.parse(readFileSync(join(project, file), 'utf8')));
  expect(ours.map((pkg) => pkg.name).sort()).toEqual(['@eve-flue/bridge', '@eve-flue/compat-server', '@eve-flue/connections', '@eve-flue/eve-protocol', '@eve-flue/flue-adapter', '@eve-flue/flue-redis', '@eve-flue/session-contract']);
  expect(ours.filter((pkg) => Object.keys(pkg.dependencies ?? {}).includes('jose')).map((pkg) => pkg.name)).toEqual(['@eve-flue/compat-server']);
});

test('the installed CLI runs the project\'s bridge.config.ts: an echo, a connection tool, and the stream replayed after a restart', async () => {
  const dataDir = join(project, '.data');
  const first = await start(dataDir);
  const client = new Client({ host: first.url });
  const { session, response } = await client.sessions.create({ message: 'hello from the project' });
  expect((await response!.result()).message).toBe('Echo: hello from the project');
  const toolTurn = await (await client.sessions.attach(session.state.sessionId, { streamIndex: session.state.streamIndex }).send('/tool connection__tiny__echo {"text":"from a tool"}')).result();
  expect(toolTurn.message).toBe('Tool connection__tiny__echo returned: from a tool');
  const outcome = toolTurn.events.find((e) => e.type === 'action.result')?.data;
  expect(outcome).toMatchObject({ status: 'completed', result: { toolName: 'connection__tiny__echo', output: 'from a tool' } });
  const before = await collect(client.sessions.attach(session.state.sessionId).stream({ startIndex: 0, follow: false }));
  await first.stop();

  const second = await start(dataDir);
  const after = await collect(new Client({ host: second.url }).sessions.attach(session.state.sessionId).stream({ startIndex: 0, follow: false }));
  expect(after).toEqual(before);
  expect(after.map((e) => e.type)).toContain('turn.completed');
});

test('the published types compile in the author\'s project with skipLibCheck: false, and are real types', async () => {
  // A mistake the published types must catch: were they `any`, the expectation below would be unused (an error too).
  await writeFile(join(project, 'mistake.ts'), `import { defineBridgeConfig } from '@eve-flue/bridge';
import { Helper } from './bridge.config.js';
// @ts-expect-error \`port\` is a number
defineBridgeConfig({ agent: Helper, port: '3000' });
`);
  const tsconfig = { compilerOptions: { target: 'es2022', module: 'nodenext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, files: ['bridge.config.ts', 'mistake.ts'] };
  await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  const output = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, env }).then(
    ({ stdout }) => stdout,
    (error: { stdout: string }) => error.stdout,
  );
  const errors = output.split('\n').filter((line) => line.includes('error TS'));
  // Other packages' declarations (@flue/runtime's, the Anthropic SDK's) have errors of their own; ours and the author's files have none.
  const ours = errors.filter((line) => !line.startsWith('node_modules/') || line.startsWith('node_modules/@eve-flue/'));
  process.stdout.write(`[installed-package] tsc with skipLibCheck false: ${errors.length} errors, ${ours.length} in @eve-flue or the author's files\n`);
  expect(ours).toEqual([]);
}, 600_000);

test('init writes a starter config that check accepts; init never overwrites', async () => {
  const fresh = join(project, 'fresh');
  await mkdir(fresh);
  const init = await run(process.execPath, [bin, 'init'], { cwd: fresh, env });
  expect(init.stdout).toContain('wrote bridge.config.ts');
  await expect(run(process.execPath, [bin, 'init'], { cwd: fresh, env })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('already exist') });
  const check = await run(process.execPath, [bin, 'check'], { cwd: fresh, env });
  expect(check.stdout).toBe('no connections configured\n');
});

test('the demo command names the package it needs when only the bridge is installed', async () => {
  await expect(run(process.execPath, [bin, 'demo'], { cwd: project, env })).rejects.toMatchObject({
    code: 2,
    stderr: '[eve-flue] the demo is the @eve-flue/demo package: npm install --save-dev @eve-flue/demo\n',
  });
});
