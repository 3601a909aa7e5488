import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { bearerTokens, none } from '@eve-flue/bridge';
import { defineFlueConnection, type ConnectionSetContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import type { Listening } from './support/listen.ts';
import { recordingLogger } from './support/logs.ts';
import { callTool, connectMcp, rejection } from './support/mcp-client.ts';
import { startToolServers } from './support/tool-servers.ts';

// Published tools with per-caller connection sets: each caller lists and calls the tools of
// their own set, resolved for their principal (no session: a direct call has none).
const TOKENS = { ann: 'mcp-sets-token-of-ann-000001', bob: 'mcp-sets-token-of-bob-000001', carol: 'mcp-sets-token-of-carol-00001' };
const AGENT_TOOLS = ['agent_start', 'agent_get', 'agent_update', 'agent_cancel'];
const logger = recordingLogger();
const resolvedFor: ConnectionSetContext[] = [];
let annServer: Listening;
let bobServer: Listening;
let bridge: DemoBridge;

beforeAll(async () => {
  [annServer, bobServer] = [await startToolServers(), await startToolServers()];
  bridge = await startDemoBridge(
    {
      // Bearer tokens first; anyone else is admitted anonymously (nobody in particular).
      auth: [bearerTokens({ [TOKENS.ann]: 'ann', [TOKENS.bob]: 'bob', [TOKENS.carol]: 'carol' }), none()],
      connections: async (ctx) => {
        resolvedFor.push(ctx);
        switch (ctx.principal?.id) {
          case 'ann':
            return [defineFlueConnection({ name: 'workspace', url: `${annServer.url}/mcp/ann_notes` })];
          case 'bob':
            return [defineFlueConnection({ name: 'workspace', url: `${bobServer.url}/locked/mcp/bob_crm`, auth: { type: 'bearer', token: 'letmein' }, instanceKey: 'tenant-bob' })];
          case 'carol':
            throw new Error('tenant directory unreachable (secret-detail-0815)');
          default:
            return [defineFlueConnection({ name: 'public', url: `${annServer.url}/mcp/lobby` })];
        }
      },
      mcp: { tools: true },
    },
    logger,
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await annServer?.close();
  await bobServer?.close();
});

const endpoint = () => `${bridge.url}/eve/v1/mcp`;
const namesFor = async (token?: string) => {
  const client = await connectMcp(endpoint(), token);
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((t) => t.name);
};
/** How the channel refuses a `tools/call` of a name it does not serve: the JSON-RPC error, code and message. */
const refusalOf = async (token: string, name: string) => {
  const client = await connectMcp(endpoint(), token);
  const error = await callTool(client, name, { text: 'x' }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  await client.close();
  if (!(error instanceof McpError)) throw new Error(`${name} was not refused: ${String(error)}`);
  return { code: error.code, message: error.message.replaceAll(name, '<name>') };
};

test('each principal lists only the tools of their own set, resolved for them with no session', async () => {
  expect(await namesFor(TOKENS.ann)).toEqual([...AGENT_TOOLS, 'connection__workspace__ann_notes']);
  expect(await namesFor(TOKENS.bob)).toEqual([...AGENT_TOOLS, 'connection__workspace__bob_crm']);
  expect(resolvedFor).toContainEqual({ principal: expect.objectContaining({ id: 'ann' }) });
  expect(resolvedFor.every((ctx) => ctx.sessionId === undefined)).toBe(true);
});

test("each principal calls their own server's tool, and another's is refused as an unknown tool", async () => {
  for (const [who, tool] of [
    ['ann', 'connection__workspace__ann_notes'],
    ['bob', 'connection__workspace__bob_crm'],
  ] as const) {
    const client = await connectMcp(endpoint(), TOKENS[who]);
    expect(await callTool(client, tool, { text: `from ${who}` })).toMatchObject({ content: [{ type: 'text', text: `from ${who}` }] });
    await client.close();
  }
  const unknown = await refusalOf(TOKENS.ann, 'connection__nowhere__nothing');
  expect(unknown.code).toBe(-32602);
  expect(await refusalOf(TOKENS.ann, 'connection__workspace__bob_crm')).toEqual(unknown);
  expect(await refusalOf(TOKENS.bob, 'connection__workspace__ann_notes')).toEqual(unknown);
});

test('a caller’s set is resolved once for their direct calls, not on every request', async () => {
  const before = resolvedFor.filter((ctx) => ctx.principal?.id === 'bob').length;
  const client = await connectMcp(endpoint(), TOKENS.bob);
  await callTool(client, 'connection__workspace__bob_crm', { text: 'again' });
  await client.listTools();
  await client.close();
  expect(resolvedFor.filter((ctx) => ctx.principal?.id === 'bob').length).toBe(before);
});

test('an anonymous caller gets the set resolved with no principal', async () => {
  expect(await namesFor()).toEqual([...AGENT_TOOLS, 'connection__public__lobby']);
  expect(resolvedFor).toContainEqual({});
  const client = await connectMcp(endpoint());
  expect(await callTool(client, 'connection__public__lobby', { text: 'hello lobby' })).toMatchObject({ content: [{ type: 'text', text: 'hello lobby' }] });
  await client.close();
});

test('a resolver that throws: tools/list still answers the agent_* tools (logged), tools/call is internal with an errorId', async () => {
  expect(await namesFor(TOKENS.carol)).toEqual(AGENT_TOOLS);
  expect(logger.entries.some((e) => e.message.startsWith('the published tools could not be resolved'))).toBe(true);
  const client = await connectMcp(endpoint(), TOKENS.carol);
  const error = await rejection(client, 'connection__workspace__ann_notes', { text: 'x' });
  await client.close();
  expect(error).toEqual({ code: 'internal', errorId: expect.any(String), message: 'The server could not complete this tool call.', retryable: false });
  expect(JSON.stringify(error)).not.toContain('secret-detail');
  expect(logger.entries.find((e) => e.message === 'MCP tool call failed' && (e.fields as { errorId?: string }).errorId === error.errorId)).toBeDefined();
});
