import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { readUntil } from './support/events.ts';
import { eventCount, openStartLink, parkOnSignIn } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

let bridge: DemoBridge;
let browser: Browser;
let client: Client;
let failTokenRequests = false;

beforeAll(async () => {
  [bridge, browser] = await Promise.all([startDemoBridge({ signInTtlMs: 1_500 }), launchChromium()]);
  // The provider's token endpoint breaks on demand: reading the authorization code fails, and it
  // answers 500 server_error, as in an outage. (Sign-in requests go through the bridge's own
  // pinned agent, so the outage is the server's, not a stand-in for fetch.)
  const codes = bridge.authorizationServer.provider.AuthorizationCode;
  const find = codes.find.bind(codes);
  codes.find = (async (jti: string, options?: { ignoreExpiration?: boolean }) => {
    if (failTokenRequests) throw new Error('token endpoint down');
    return find(jti, options);
  }) as typeof codes.find;
  client = new Client({ host: bridge.url });
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
});

type AnyEvent = { type: string; data: Record<string, unknown> };

test('a sign-in nobody finishes times out: the model gets a tool error and the turn goes on', async () => {
  const parked = await parkOnSignIn(client);
  const { cookie, state } = await openStartLink(parked.startUrl);
  const result = await parked.result;
  const events = result.events as unknown as AnyEvent[];
  expect(events.find((e) => e.type === 'authorization.completed')?.data).toMatchObject({ outcome: 'timed-out', attemptId: parked.attemptId });
  expect(result.message).toMatch(/^Tool connection__demo__whoami returned: Demo is not connected \(timed-out/);
  expect(events.at(-1)?.type).toBe('session.waiting');
  // The callback for the expired flow is refused and adds nothing.
  const before = await eventCount(parked.session);
  const late = await fetch(`${bridge.url}/eve/v1/oauth/callback?${new URLSearchParams({ code: 'late', state })}`, { headers: { cookie }, redirect: 'manual' });
  expect(late.status).toBe(400);
  expect(await eventCount(parked.session)).toBe(before);
});

test('a failing token endpoint ends the sign-in as failed', async () => {
  failTokenRequests = true;
  try {
    const parked = await parkOnSignIn(client);
    const page = await answerSignIn(browser, parked.startUrl, 'Approve');
    expect(page.finalUrl).toMatch(/\/oauth\/result\/failed$/);
    const result = await parked.result;
    const completed = (result.events as unknown as AnyEvent[]).find((e) => e.type === 'authorization.completed')!;
    expect(completed.data).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('HTTP 500') });
    expect(result.message).toMatch(/^Tool connection__demo__whoami returned: Demo is not connected \(failed/);
  } finally {
    failTokenRequests = false;
  }
});

test('a message from the same person while the sign-in is pending declines it and steers the turn', async () => {
  const parked = await parkOnSignIn(client);
  const steered = await (await parked.session.send('never mind')).result();
  const completed = (steered.events as unknown as AnyEvent[]).find((e) => e.type === 'authorization.completed');
  expect(completed?.data).toMatchObject({ outcome: 'declined', attemptId: parked.attemptId });
  expect(steered.message).toBe('Echo: never mind');
  // The withdrawn sign-in link no longer works.
  expect((await fetch(parked.startUrl, { redirect: 'manual' })).status).toBe(404);
});

test('cancelling a parked turn declines its sign-in', async () => {
  const parked = await parkOnSignIn(client);
  await parked.session.cancel();
  const tail = await readUntil(parked.session.stream(), (e) => e.type === 'session.waiting');
  const types = tail.map((e) => e.type);
  expect(types.indexOf('authorization.completed')).toBeLessThan(types.indexOf('turn.cancelled'));
  expect(tail.find((e) => e.type === 'authorization.completed')?.data).toMatchObject({ outcome: 'declined' });
});
