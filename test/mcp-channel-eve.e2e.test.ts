import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { bearerTokens } from '@eve-flue/compat-server';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { startEveMcpApp, type EveMcpApp } from './support/eve-mcp-app.ts';
import { connectMcp } from './support/mcp-client.ts';
import { describeMcpContract } from './support/mcp-contract.ts';

// The contract checks run against Eve's own mcpChannel in a real, offline Eve 0.80.1 app, and
// the bridge is compared with it where an MCP host can see the difference. Where the two must
// differ, and why:
// - invocation ids: Eve's are its workflow run ids (`wrun_…`), the bridge's its session ids
//   (`ses_…`); a host treats both as opaque strings.
// - serverInfo: both name the agent (Eve: the app's package name), each with its own version.
// - `failed.error.data.eveCode`: the code of whatever failed, which is the runtime's own.
const TOKENS = { ann: 'eve-fixture-token-of-ann-01', bob: 'eve-fixture-token-of-bob-01' };
const ISSUER = 'https://auth.example.com';
const SCOPES = ['agent:invoke'];
let eve: EveMcpApp;
let bridge: DemoBridge;

beforeAll(async () => {
  [eve, bridge] = await Promise.all([
    startEveMcpApp({ tokens: { [TOKENS.ann]: 'ann', [TOKENS.bob]: 'bob' }, issuer: ISSUER }),
    startDemoBridge({ auth: bearerTokens({ [TOKENS.ann]: 'ann', [TOKENS.bob]: 'bob' }), mcp: { oauth: { issuer: ISSUER, scopes: SCOPES } } }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([eve?.close(), bridge?.close()]);
});

describeMcpContract('a real Eve app', () => ({ url: eve.url, tokens: TOKENS, oauth: { issuer: ISSUER, scopes: SCOPES } }));

describe('the bridge against a real Eve app', () => {
  test('the same tools, schemas, annotations and instructions', async () => {
    const [fromEve, fromBridge] = await Promise.all([connectMcp(eve.url, TOKENS.ann), connectMcp(`${bridge.url}/eve/v1/mcp`, TOKENS.ann)]);
    expect(fromBridge.getInstructions()).toBe(fromEve.getInstructions());
    expect(fromBridge.getServerCapabilities()).toEqual(fromEve.getServerCapabilities());
    expect((await fromBridge.listTools()).tools).toEqual((await fromEve.listTools()).tools);
    expect(fromBridge.getServerVersion()?.name).toBe('demo');
    await Promise.all([fromEve.close(), fromBridge.close()]);
  });
});
