/** A server built with fastmcp, a framework nobody here wrote, behind the bridge: in a turn and as a published tool. */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';
import { connectMcp } from './support/mcp-client.ts';
import { startFastMcpServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

const ROUTE = 'route-token-of-ann-fastmcp-01';
const UPSTREAM = 'upstream-secret-for-fastmcp-4711';
const logger = recordingLogger();
let fast: ThirdPartyServer;
let bridge: DemoBridge;

beforeAll(async () => {
  fast = await startFastMcpServer(UPSTREAM);
  bridge = await startDemoBridge(
    {
      auth: bearerTokens({ [ROUTE]: 'ann' }),
      connections: [defineFlueConnection({ name: 'fast', url: fast.url, auth: { type: 'bearer', token: UPSTREAM } })],
      mcp: { tools: true },
    },
    logger,
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await fast?.close();
});

const ask = async (message: string) => {
  const { response } = await new Client({ host: bridge.url, auth: { bearer: ROUTE } }).sessions.create({ message });
  return response!.result();
};

test('the agent calls a fastmcp tool in a turn, under its Eve name', async () => {
  const result = await ask('/tool connection__fast__add {"a":20,"b":22}');
  expect(result.message).toBe('Tool connection__fast__add returned: 42');
  const started = result.events.find((e) => e.type === 'actions.requested') as unknown as { data: { actions: { toolName: string }[] } };
  expect(started.data.actions.map((a) => a.toolName)).toEqual(['connection__fast__add']);
});

test("a fastmcp tool's own error reaches the model as the tool's result, and the turn completes", async () => {
  const result = await ask('/tool connection__fast__divide {"a":1,"b":0}');
  expect(result.message).toBe('Tool connection__fast__divide returned: Cannot divide by zero.');
  expect(result.events.map((e) => e.type)).toContain('turn.completed');
});

test('published over MCP: listed with its zod schema, called directly, and the upstream token shows nowhere', async () => {
  const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, ROUTE);
  const { tools } = await client.listTools();
  const add = tools.find((t) => t.name === 'connection__fast__add');
  expect(add?.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
  const sum = await client.callTool({ name: 'connection__fast__add', arguments: { a: 2, b: 3 } });
  expect(sum).toMatchObject({ content: [{ type: 'text', text: '5' }] });
  const refused = await client.callTool({ name: 'connection__fast__divide', arguments: { a: 1, b: 0 } });
  expect(refused).toMatchObject({ isError: true, structuredContent: { error: { code: 'internal' } } });
  await client.close();
  expect(logger.text().includes(UPSTREAM)).toBe(false);
});
