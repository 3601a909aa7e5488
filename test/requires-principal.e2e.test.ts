import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { defineFlueConnection } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn } from './support/events.ts';
import { startEverythingServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// No route auth: every turn is anonymous.
let everything: ThirdPartyServer;
let bridge: DemoBridge;

beforeAll(async () => {
  everything = await startEverythingServer();
  bridge = await startDemoBridge({
    connections: [
      defineFlueConnection({ name: 'members', url: everything.url, requiresPrincipal: true, tools: ['echo'] }),
      defineFlueConnection({ name: 'public', url: everything.url, tools: ['echo'] }),
    ],
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await everything?.close();
});

test('an anonymous turn does not see a requiresPrincipal connection’s tools, and still sees the others', async () => {
  const client = new Client({ host: bridge.url });
  const hidden = await (await client.sessions.create({ message: '/tool connection__members__echo {"message":"x"}' })).response!.result();
  expect(hidden.message).toBe('No tool named connection__members__echo is available.');
  const open = await (await client.sessions.create({ message: '/tool connection__public__echo {"message":"x"}' })).response!.result();
  expect(open.message).toBe('Tool connection__public__echo returned: Echo: x');
  expect(flueNamesIn([hidden.events, open.events])).toEqual([]);
});
