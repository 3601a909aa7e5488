import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, type ConnectionSetContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn } from './support/events.ts';
import type { Listening } from './support/listen.ts';
import { startToolServers } from './support/tool-servers.ts';

// One session in memory at most: a second session evicts the first, and its per-caller set with it.
const ALICE = 'route-token-of-alice-0123456789';
const NOTES = '/tool connection__workspace__alice_notes';
let server: Listening;
let bridge: DemoBridge;
const resolved: ConnectionSetContext[] = [];
const journals: unknown[] = [];

beforeAll(async () => {
  server = await startToolServers();
  bridge = await startDemoBridge({
    auth: bearerTokens({ [ALICE]: 'alice' }),
    maxResidentSessions: 1,
    metricsPort: 0,
    connections: (ctx) => {
      resolved.push(ctx);
      return [defineFlueConnection({ name: 'workspace', url: `${server.url}/mcp/alice_notes` })];
    },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await server?.close();
  expect(flueNamesIn(journals)).toEqual([]);
});

/** Waits (scraping the metrics) until the bridge has evicted a session to make room. */
async function evictedForRoom(): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!/^eve_bridge_session_evictions_total\{reason="capacity"\} [1-9]/m.test(await (await fetch(bridge.metricsUrl!)).text())) {
    if (Date.now() > deadline) throw new Error('no session was evicted');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('an evicted session lets go of its set; its next turn resolves it again and calls the same server', async () => {
  const client = new Client({ host: bridge.url, auth: { bearer: ALICE } });
  const first = await client.sessions.create({ message: `${NOTES} {"text":"one"}` });
  const before = await first.response!.result();
  journals.push(before.events);
  expect(before.message).toBe('Tool connection__workspace__alice_notes returned: one');
  const sessionId = first.session.state.sessionId;
  const resolvedFirst = () => resolved.filter((c) => c.sessionId === sessionId).length;
  expect(resolvedFirst()).toBe(1);

  await (await client.sessions.create({ message: 'another session' })).response!.result();
  await evictedForRoom();
  const again = await (await client.sessions.attach(sessionId, { streamIndex: before.events.length }).send(`${NOTES} {"text":"two"}`)).result();
  journals.push(again.events);
  expect(again.message).toBe('Tool connection__workspace__alice_notes returned: two');
  expect(resolvedFirst()).toBe(2);
});
