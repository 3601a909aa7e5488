import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { defineFlueConnection } from '@eve-flue/bridge';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';

let broken: DemoBridge;

beforeAll(async () => {
  // Port 9 (discard) is closed here: nothing answers the MCP requests.
  broken = await startDemoBridge({ connections: [defineFlueConnection({ name: 'demo', url: 'http://127.0.0.1:9/mcp' })] });
});

afterAll(async () => {
  await broken.close();
});

test('a connection whose server is down leaves the agent answering, and its status says why', async () => {
  const { response } = await new Client({ host: broken.url }).sessions.create({ message: 'are you there?' });
  expect((await response!.result()).message).toBe('Echo: are you there?');
  const [status] = broken.connections.status();
  expect(status).toMatchObject({ name: 'demo', state: 'error' });
  expect(status!.missing[0]).toMatch(/^the server is unavailable: /);
});
