/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`), a client nobody here wrote,
 * driving the MCP channel: each call a process of its own, as a script runs it. The checks that
 * are Eve's contract run against Eve's own mcpChannel too (a real, offline Eve app).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { bearerTokens } from '@eve-flue/compat-server';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { startEveMcpApp, type EveMcpApp } from './support/eve-mcp-app.ts';

const run = promisify(execFile);
const TOKEN = 'inspector-token-of-ann-0001';
const require = createRequire(import.meta.url);
const inspectorPackage = require.resolve('@modelcontextprotocol/inspector/package.json');
const INSPECTOR = join(dirname(inspectorPackage), (require(inspectorPackage) as { bin: Record<string, string> }).bin['mcp-inspector']!);
const AGENT_TOOLS = ['agent_start', 'agent_get', 'agent_update', 'agent_cancel'];
let bridge: DemoBridge;
let eve: EveMcpApp;
const catalogs: string[] = [];

beforeAll(async () => {
  [bridge, eve] = await Promise.all([
    startDemoBridge({ auth: bearerTokens({ [TOKEN]: 'ann' }), mcp: { tools: true } }),
    startEveMcpApp({ tokens: { [TOKEN]: 'ann' }, issuer: 'https://auth.example.com' }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([bridge?.close(), eve?.close()]);
  for (const catalog of catalogs) rmSync(catalog, { recursive: true, force: true });
});

/**
 * One Inspector CLI run; its JSON output, or the failed run thrown (its exit code, and its error as JSON on stderr). Each run
 * gets a catalog of its own: the Inspector remembers a server's headers there, and a run with no
 * token must not find the last run's.
 */
async function inspector(url: string, args: string[], token: string | null = TOKEN): Promise<Record<string, unknown>> {
  const catalog = mkdtempSync(join(tmpdir(), 'eve-flue-inspector-'));
  catalogs.push(catalog);
  const { stdout } = await run(
    process.execPath,
    [INSPECTOR, '--cli', url, '--transport', 'http', ...(token ? ['--header', `Authorization: Bearer ${token}`] : []), ...args],
    { env: { ...process.env, HOME: catalog, MCP_CATALOG_PATH: join(catalog, 'mcp.json') }, timeout: 30_000 },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

type ToolResult = { structuredContent?: Record<string, unknown>; isError?: boolean; content: { text: string }[] };
const call = async (url: string, tool: string, ...pairs: string[]) =>
  (await inspector(url, ['--method', 'tools/call', '--tool-name', tool, ...(pairs.length > 0 ? ['--tool-arg', ...pairs] : [])])) as ToolResult;

describe.each([
  ['the bridge', () => `${bridge.url}/eve/v1/mcp`],
  ['a real Eve app', () => eve.url],
])('the Inspector against %s', (_name, urlOf) => {
  test('lists the agent_* tools first, with their schemas', async () => {
    const { tools } = (await inspector(urlOf(), ['--method', 'tools/list'])) as { tools: { name: string; outputSchema?: unknown }[] };
    expect(tools.slice(0, 4).map((t) => t.name)).toEqual(AGENT_TOOLS);
    for (const tool of tools.slice(0, 4)) expect(tool.outputSchema).toMatchObject({ oneOf: expect.any(Array) });
  }, 60_000);

  // Eve answers a rejected call with `isError` and `structuredContent.error`, which is none of the
  // states the tool's outputSchema lists. The MCP SDK's Client checks structuredContent only on
  // results that are not errors; the Inspector checks it on every result, and so refuses Eve's own
  // answer, as it refuses the bridge's, which has Eve's shape.
  test('an unknown invocation: Eve\'s not_found, which the Inspector finds outside the output schema', async () => {
    const refused = await call(urlOf(), 'agent_get', 'invocationId=ses_nobodys_invocation').catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: expect.any(Number) });
    expect(JSON.parse((refused as { stderr: string }).stderr)).toMatchObject({ error: { message: expect.stringContaining('must match exactly one schema in oneOf') } });
  }, 60_000);

  test('without a token it meets the OAuth challenge, and with no sign-in stored it stops', async () => {
    const refused = await inspector(urlOf(), ['--method', 'tools/list', '--stored-auth-only'], null).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: expect.any(Number) });
    expect(JSON.parse((refused as { stderr: string }).stderr)).toMatchObject({ error: { code: 'auth_required' } });
  }, 60_000);
});

describe('the Inspector against the bridge', () => {
  test('starts an invocation in which the agent calls a connection tool, and polls it to completed', async () => {
    const url = `${bridge.url}/eve/v1/mcp`;
    const started = await call(url, 'agent_start', 'message=/tool connection__demo__echo {"text":"from the Inspector"}');
    expect(started.structuredContent).toMatchObject({ status: 'working' });
    const { invocationId } = started.structuredContent as { invocationId: string };
    let state: Record<string, unknown> | undefined;
    // Each poll is a process of its own (about a second): the state ends the wait.
    for (let polls = 0; polls < 30; polls++) {
      state = (await call(url, 'agent_get', `invocationId=${invocationId}`)).structuredContent;
      if (state?.status !== 'working') break;
    }
    expect(state).toMatchObject({ invocationId, status: 'completed', result: 'Tool connection__demo__echo returned: from the Inspector' });
  }, 120_000);

  test('calls a published connection tool directly', async () => {
    const echoed = await call(`${bridge.url}/eve/v1/mcp`, 'connection__demo__echo', 'text=direct');
    expect(echoed.content[0]!.text).toBe('direct');
  }, 60_000);
});
