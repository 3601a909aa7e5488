import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort } from '../../../test/support/free-port.ts';
import type { Listening } from '../../../test/support/listen.ts';
import { startPetApi, type PetApi } from '../../../test/support/pet-api.ts';
import { startToolServers } from '../../../test/support/tool-servers.ts';

const cli = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const checkConfig = fileURLToPath(new URL('./fixtures/check.config.ts', import.meta.url));

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from source in `cwd` and returns how it ended. */
function runCli(args: string[], { cwd, env = {} }: { cwd?: string; env?: Record<string, string> } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

let dir: string;
let tools: Listening;
let deadUrl: string;

beforeAll(async () => {
  [dir, tools] = await Promise.all([mkdtemp(join(tmpdir(), 'eve-flue-cli-test-')), startToolServers()]);
  deadUrl = `http://127.0.0.1:${await freePort()}/mcp`;
});

afterAll(async () => {
  await tools?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('eve-flue-bridge check', () => {
  /** `check` on the fixture config with the named connections (none named: left to ./.env). */
  const check = (connections?: string, { cwd, env = {} }: { cwd?: string; env?: Record<string, string> } = {}) =>
    runCli(['check', '--config', checkConfig], { cwd, env: { TOOLS_URL: tools.url, DEAD_URL: deadUrl, ...(connections ? { CHECK_CONNECTIONS: connections } : {}), ...env } });

  test('a ready connection: its tools, exit 0', async () => {
    expect(await check('tiny')).toEqual({ code: 0, stdout: 'tiny: ready, tools connection__tiny__echo\n', stderr: '' });
  });

  test('a ready, a dead and a sign-in connection: one line each, exit 1', async () => {
    const { code, stdout, stderr } = await check('tiny,dead,locked');
    expect(code).toBe(1);
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe('tiny: ready, tools connection__tiny__echo');
    expect(lines[1]).toMatch(/^dead: error: the server is unavailable: /);
    expect(lines[2]).toBe('locked: needs sign in: sign in: the server lists its tools only to signed-in callers');
  });

  test('a CORS_ORIGINS entry that is not an origin stops it before any connection', async () => {
    const { code, stderr } = await check('tiny', { env: { CORS_ORIGINS: 'app.example.com' } });
    expect(code).toBe(1);
    expect(stderr).toBe('[eve-flue] CORS_ORIGINS: "app.example.com" is not a comma-separated list of origins such as https://app.example.com\n');
  });

  test('./.env fills in what the environment does not set', async () => {
    const here = join(dir, 'with-dot-env');
    await mkdir(here);
    await writeFile(join(here, '.env'), 'CHECK_CONNECTIONS=tiny\nCORS_ORIGINS=from-dot-env\n');
    const { code, stderr } = await check(undefined, { cwd: here });
    expect(code).toBe(1);
    expect(stderr).toBe('[eve-flue] CORS_ORIGINS: "from-dot-env" is not a comma-separated list of origins such as https://app.example.com\n');
  });

  test.each([
    ['SHUTDOWN_GRACE_MS', 'soon', 'is not a number of milliseconds'],
    ['METRICS_PORT', 'abc', 'is not a port number'],
    ['IDLE_SESSION_MS', 'soon', 'is not a number of milliseconds'],
  ])('a bad %s=%s stops it with one line naming the variable', async (name, value, problem) => {
    expect(await check('tiny', { env: { [name]: value } })).toEqual({ code: 1, stdout: '', stderr: `[eve-flue] ${name}: "${value}" ${problem}\n` });
  });

  describe('OpenAPI connections', () => {
    let pets: PetApi;
    beforeAll(async () => {
      pets = await startPetApi();
    });
    afterAll(async () => {
      await pets?.close();
    });

    test('lists the operations as tools (the blocked one left out) without calling any, and without the key on the spec fetch', async () => {
      const outcome = await check('pets', { env: { PETS_ORIGIN: pets.origin } });
      expect(outcome).toEqual({
        code: 0,
        stdout: 'pets: ready, tools connection__pets__listPets, connection__pets__createPet, connection__pets__getPet, connection__pets__get_pets_petId_photos\n',
        stderr: '',
      });
      expect(pets.seen.map((s) => s.url)).toEqual(['/openapi.json']);
      expect(pets.seen[0]!.headers.authorization).toBeUndefined();
    });

    test('a spec that cannot be fetched: an error line with the reason, exit 1', async () => {
      const { code, stdout } = await check('nospec', { env: { PETS_ORIGIN: pets.origin } });
      expect(code).toBe(1);
      expect(stdout).toBe(`nospec: error: the server is unavailable: MCP error -32603: OpenAPI connection "nospec" could not fetch its spec from ${pets.origin}/missing.json: HTTP 404\n`);
    });
  });

  test('a dead connection alone fails the check', async () => {
    expect((await check('dead')).code).toBe(1);
  });
});

describe('the CLI refuses bad input with one line and a non-zero exit', () => {
  test('an unknown flag or command', async () => {
    expect(await runCli(['start', '--prot', '3000'])).toEqual({ code: 2, stdout: '', stderr: "[eve-flue] Unknown option '--prot'; see eve-flue-bridge --help\n" });
    expect(await runCli(['serve'])).toEqual({ code: 2, stdout: '', stderr: '[eve-flue] unknown command "serve"; see eve-flue-bridge --help\n' });
    expect(await runCli(['init', '--config', 'x.ts'])).toMatchObject({ code: 2, stderr: '[eve-flue] --config applies to start and check, not init\n' });
  });

  test('no bridge.config.ts where it starts', async () => {
    expect(await runCli(['start'], { cwd: dir })).toEqual({
      code: 1,
      stdout: '',
      stderr: `[eve-flue] ./bridge.config.ts: no such file; write one with \`eve-flue-bridge init\`, or pass --config <file>\n`,
    });
  });

  test.each([
    ['bad-field.ts', "export default { agent: () => 'x', prot: 3000 };", 'bridge config: `prot` is not a bridge setting'],
    ['no-default.ts', 'export const agent = 1;', 'no default export; end it with `export default defineBridgeConfig({ agent, ... })`'],
    ['bad-agent.ts', "export default { agent: 'support' };", 'bridge config: `agent` must be a Flue agent function'],
    ['syntax.ts', 'export default {', ''],
    ['throws.ts', "throw new Error('PORTAL_URL is not set');", 'PORTAL_URL is not set'],
  ])('a broken config (%s) names the file and what is wrong', async (name, source, problem) => {
    await writeFile(join(dir, name), source);
    const { code, stdout, stderr } = await runCli(['start', '--config', name], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toHaveLength(2); // one line
    expect(stderr.startsWith(`[eve-flue] ./${name}: ${problem}`)).toBe(true);
  });
});

test('--version prints the package version', async () => {
  const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
  expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
});
