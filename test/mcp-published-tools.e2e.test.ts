import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection } from '@eve-flue/connections';
import { demoConnections, startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';
import { callTool, connectMcp, rejection } from './support/mcp-client.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';

// `tools: true` publishes the connection tools the bridge mounts; each call runs upstream for the
// caller, with no model turn, and what a conversation would have asked a person for is refused.
const TOKENS = { ann: 'published-tools-token-ann-01', bob: 'published-tools-token-bob-01' };
const logger = recordingLogger();
let both: DemoBridge;
let proxy: RecordingProxy;

beforeAll(async () => {
  const auth = bearerTokens({ [TOKENS.ann]: 'ann', [TOKENS.bob]: 'bob' });
  both = await startDemoBridge(
    async (demo) => ({
      auth,
      connections: [
        ...demoConnections(demo),
        defineFlueConnection({ name: 'gated', url: demo.mcpUrl, tools: ['echo'], approval: 'always' }),
        defineFlueConnection({ name: 'refused', url: demo.mcpUrl, tools: ['echo'], approval: () => 'denied' }),
        // Per-caller headers, seen by a proxy in front of the server.
        defineFlueConnection({
          name: 'percaller',
          url: `${(proxy = await startRecordingProxy(new URL(demo.mcpUrl).origin)).url}${new URL(demo.mcpUrl).pathname}`,
          tools: ['echo'],
          headers: { 'x-caller': ({ principal }) => principal ?? 'nobody' },
        }),
      ],
      mcp: { tools: true },
    }),
    logger,
  );
}, 60_000);

afterAll(async () => {
  await both?.close();
  await proxy?.close();
});

describe('published tools', () => {
  test('tools/list: the agent_* tools first, then the connection tools in name order, with their schemas', async () => {
    const client = await connectMcp(`${both.url}/eve/v1/mcp`, TOKENS.ann);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 4)).toEqual(['agent_start', 'agent_get', 'agent_update', 'agent_cancel']);
    const published = names.slice(4);
    expect(published).toEqual([...published].sort());
    expect(published).toEqual(expect.arrayContaining(['connection__demo__echo', 'connection__gated__echo', 'connection__refused__echo']));
    expect(published.some((name) => name.startsWith('mcp__'))).toBe(false);
    const echo = tools.find((t) => t.name === 'connection__demo__echo')!;
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: expect.objectContaining({ type: 'string' }) } });
    await client.close();
  });

  test('a connection tool called directly runs upstream and answers, with no session started', async () => {
    const client = await connectMcp(`${both.url}/eve/v1/mcp`, TOKENS.ann);
    const before = both.compat.activeSessions();
    const result = await callTool(client, 'connection__demo__echo', { text: 'straight through' });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'straight through' }]);
    expect(both.compat.activeSessions()).toBe(before);
    await client.close();
  });

  test("the caller's own credentials go upstream", async () => {
    for (const who of ['ann', 'bob'] as const) {
      const client = await connectMcp(`${both.url}/eve/v1/mcp`, TOKENS[who]);
      expect((await callTool(client, 'connection__percaller__echo', { text: `from ${who}` })).content).toEqual([{ type: 'text', text: `from ${who}` }]);
      const call = proxy.requests.find((r) => r.body.includes('tools/call') && r.body.includes(`from ${who}`));
      expect(call?.headers['x-caller']).toBe(who);
      await client.close();
    }
  });

  test('arguments the input schema rejects are invalid_input, before anything runs', async () => {
    const client = await connectMcp(`${both.url}/eve/v1/mcp`, TOKENS.ann);
    expect(await rejection(client, 'connection__percaller__echo', { text: 4711 })).toMatchObject({ code: 'invalid_input', retryable: false });
    expect(proxy.requests.some((r) => r.body.includes('tools/call') && r.body.includes('4711'))).toBe(false);
    await client.close();
  });

  test('approval gates: approval_required (the call did not run) and denied', async () => {
    const client = await connectMcp(`${both.url}/eve/v1/mcp`, TOKENS.ann);
    expect(await rejection(client, 'connection__gated__echo', { text: 'may I' })).toEqual({
      code: 'approval_required',
      message: `The tool "connection__gated__echo" needs a person's approval, which this MCP channel cannot ask for. Call it from a conversation instead.`,
      retryable: false,
    });
    expect(await rejection(client, 'connection__refused__echo', { text: 'no' })).toEqual({ code: 'denied', message: 'The approval policy of refused denied this call.', retryable: false });
    await client.close();
  });

  test('a connection the caller has not signed in to answers authorization_required', async () => {
    const client = await connectMcp(`${both.url}/eve/v1/mcp`, TOKENS.bob);
    expect(await rejection(client, 'connection__demo__whoami', {})).toEqual({
      code: 'authorization_required',
      message: 'The tool "connection__demo__whoami" needs a sign-in to demo, which this MCP channel cannot ask for. Sign in from a conversation, then call it again.',
      retryable: false,
    });
    await client.close();
  });
});
