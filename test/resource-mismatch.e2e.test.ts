import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { defineFlueConnection } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn } from './support/events.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { startSdkOAuthServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// The MCP SDK's OAuth example reached through a proxy: its protected-resource metadata names its
// own URL (localhost), not the one the connection uses (the proxy's), so RFC 9728 §3.3 applies.
let sdk: ThirdPartyServer;
let proxy: RecordingProxy;
let bridge: DemoBridge;

beforeAll(async () => {
  sdk = await startSdkOAuthServer();
  proxy = await startRecordingProxy(new URL(sdk.url).origin);
  bridge = await startDemoBridge({ connections: [defineFlueConnection({ name: 'mirror', url: `${proxy.url}/mcp`, auth: { type: 'oauth2' } })] });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await proxy?.close();
  await sdk?.close();
});

test('metadata naming another resource: the sign-in is refused, no token is asked for or sent, and the status says why', async () => {
  const { response } = await new Client({ host: bridge.url }).sessions.create({ message: '/tool connection__mirror__greet {"name":"Ada"}' });
  const result = await response!.result();
  expect(result.events.map((e) => e.type)).not.toContain('authorization.required');
  expect(result.message).toMatch(
    /^Tool connection__mirror returned: Mirror is not connected \(failed: the server's protected-resource metadata is for http:\/\/localhost:\d+\/mcp, not this connection's http:\/\/127\.0\.0\.1:\d+\/mcp: no token was requested\)/,
  );
  const status = (await (await fetch(`${bridge.url}/eve/v1/connections`)).json()) as { connections: { state: string; missing: string[] }[] };
  expect(status.connections[0]).toMatchObject({ state: 'error', missing: [expect.stringMatching(/^sign-in refused: the server's protected-resource metadata is for/)] });
  expect(proxy.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
  expect(flueNamesIn([result.events])).toEqual([]);
});
