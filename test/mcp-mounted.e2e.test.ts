/**
 * The MCP channel of a bridge that createBridge mounted under a path prefix, at a route of its
 * own (`mcp.route`): the endpoint, its Bearer challenge and its protected-resource metadata all
 * live under the prefix.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import express from 'express';
import { bearerTokens, silentLogger } from '@eve-flue/compat-server';
import { createBridge, defineBridgeConfig, type Bridge } from '@eve-flue/bridge';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { listen, type Listening } from './support/listen.ts';
import { connectMcp, invocation, pollUntil } from './support/mcp-client.ts';

const TOKEN = 'mounted-mcp-route-token-0001';
const ISSUER = 'https://auth.example.com';
let demo: DemoStack;
let host: Listening;
let bridge: Bridge;
let base: string;

beforeAll(async () => {
  demo = await startDemoStack();
  const app = express();
  host = await listen(app);
  base = `${host.url}/agents`;
  const config = { ...demo.config, store: 'memory' as const, publicUrl: base, auth: bearerTokens({ [TOKEN]: 'ann' }), mcp: { route: '/mcp', oauth: { issuer: ISSUER } } };
  bridge = await createBridge(defineBridgeConfig(config), { logger: silentLogger });
  app.use('/agents', bridge.app);
});

afterAll(async () => {
  await host?.close();
  await bridge?.close();
  await demo?.close();
});

test('an invocation through <prefix>/mcp runs to completion', async () => {
  const client = await connectMcp(`${base}/mcp`, TOKEN);
  const { invocationId } = await invocation(client, 'agent_start', { message: 'under a prefix' });
  expect(await pollUntil(client, invocationId, ['completed', 'failed'])).toMatchObject({ status: 'completed', result: 'Echo: under a prefix' });
  await client.close();
});

test('the challenge names the metadata under the prefix, and the metadata the prefixed resource', async () => {
  const refused = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
  expect(refused.status).toBe(401);
  const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
  expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
  const metadata = await fetch(metadataUrl);
  expect(await metadata.json()).toEqual({ authorization_servers: [ISSUER], resource: `${base}/mcp` });
  // Not at the default route, and not at the host's root.
  expect((await fetch(`${base}/eve/v1/mcp`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
});
