import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { bearerTokens } from '@eve-flue/compat-server';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { connectMcp } from './support/mcp-client.ts';

// One Flue runtime per process: this channel setting gets a bridge (and a test file) of its own.
const TOKENS = { ann: 'tools-only-token-of-ann-0001' };
let toolsOnly: DemoBridge;

beforeAll(async () => {
  toolsOnly = await startDemoBridge({ auth: bearerTokens({ [TOKENS.ann]: 'ann' }), mcp: { agent: false, tools: true } });
}, 60_000);

afterAll(async () => {
  await toolsOnly?.close();
});

test('agent: false serves only the published tools, and no agent_* instructions', async () => {
  const client = await connectMcp(`${toolsOnly.url}/eve/v1/mcp`, TOKENS.ann);
  expect(client.getInstructions()).toBeUndefined();
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(['connection__demo__echo', 'connection__demo__whoami']);
  await expect(client.callTool({ name: 'agent_start', arguments: { message: 'hi' } })).rejects.toThrow(/Tool agent_start not found/);
  await client.close();
});
