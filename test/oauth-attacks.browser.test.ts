import { describe, expect, test } from '@jest/globals';
import { useDemoWithBrowser } from './support/demo-with-browser.ts';
import { eventCount, openStartLink, parkOnSignIn, type ParkedSignIn } from './support/parked.ts';

const demo = useDemoWithBrowser();

const callback = (query: Record<string, string>, cookie?: string) =>
  fetch(`${demo.bridge.url}/eve/v1/oauth/callback?${new URLSearchParams(query)}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

/** Nothing happened: no event on the session, no token held, the turn still parked. */
async function expectUntouched(parked: ParkedSignIn, eventsBefore: number): Promise<void> {
  expect(await eventCount(parked.session)).toBe(eventsBefore);
  expect(await demo.bridge.broker.token('demo', `session:${parked.session.state.sessionId}`)).toBeUndefined();
}

describe('callbacks that are refused with a 4xx and change nothing', () => {
  test('a forged state', async () => {
    const parked = await parkOnSignIn(demo.client);
    const { cookie } = await openStartLink(parked.startUrl);
    const before = await eventCount(parked.session);
    const response = await callback({ code: 'stolen-code', state: `${parked.attemptId}.${'A'.repeat(43)}` }, cookie);
    expect(response.status).toBe(400);
    await expectUntouched(parked, before);
  });

  test('no state at all', async () => {
    expect((await callback({ code: 'some-code' })).status).toBe(400);
  });

  test('a state from a browser that never opened the start link', async () => {
    const parked = await parkOnSignIn(demo.client);
    const { state } = await openStartLink(parked.startUrl);
    const before = await eventCount(parked.session);
    expect((await callback({ code: 'some-code', state })).status).toBe(400);
    await expectUntouched(parked, before);
  });

  test('another session’s state, in a browser bound to this session’s sign-in', async () => {
    const mine = await parkOnSignIn(demo.client);
    const theirs = await parkOnSignIn(demo.client);
    const { cookie: myCookie } = await openStartLink(mine.startUrl);
    const { state: theirState } = await openStartLink(theirs.startUrl);
    const [mineBefore, theirsBefore] = [await eventCount(mine.session), await eventCount(theirs.session)];
    expect((await callback({ code: 'some-code', state: theirState }, myCookie)).status).toBe(400);
    await expectUntouched(mine, mineBefore);
    await expectUntouched(theirs, theirsBefore);
  });

  test('a callback without a code', async () => {
    const parked = await parkOnSignIn(demo.client);
    const { cookie, state } = await openStartLink(parked.startUrl);
    const before = await eventCount(parked.session);
    expect((await callback({ state }, cookie)).status).toBe(400);
    await expectUntouched(parked, before);
  });

  test('a tampered redirect URI is refused by the provider and never reaches the bridge', async () => {
    const parked = await parkOnSignIn(demo.client);
    const { providerUrl } = await openStartLink(parked.startUrl);
    const before = await eventCount(parked.session);
    providerUrl.searchParams.set('redirect_uri', 'http://127.0.0.1:9/steal');
    const context = await demo.browser.newContext();
    const page = await context.newPage();
    const answer = await page.goto(providerUrl.href);
    expect(answer?.status()).toBe(400);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await context.close();
    await expectUntouched(parked, before);
  });

  test('a replayed callback', async () => {
    const parked = await parkOnSignIn(demo.client);
    const context = await demo.browser.newContext();
    const page = await context.newPage();
    let callbackUrl = '';
    page.on('request', (request) => {
      if (request.url().includes('/eve/v1/oauth/callback')) callbackUrl = request.url();
    });
    await page.goto(parked.startUrl);
    const [binding] = (await context.cookies()).filter((c) => c.name.startsWith('eve_oauth_'));
    await Promise.all([page.waitForURL(/\/oauth\/result\/connected/), page.getByRole('button', { name: 'Approve' }).click()]);
    await context.close();
    expect((await parked.result).message).toBe('Tool connection__demo__whoami returned: demo-user');
    const before = await eventCount(parked.session);
    const replay = await fetch(callbackUrl, { headers: { cookie: `${binding!.name}=${binding!.value}` }, redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await eventCount(parked.session)).toBe(before);
  });
});

test('the callback page and the start link keep secrets out of the browser', async () => {
  const parked = await parkOnSignIn(demo.client);
  const start = await fetch(parked.startUrl, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const setCookie = start.headers.getSetCookie()[0]!;
  expect(setCookie).toMatch(/HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Lax/i);
  expect(setCookie).toMatch(/Path=\/eve\/v1\/oauth/);
  const refused = await callback({ code: 'x', state: 'nope.nope' });
  expect(refused.headers.get('cache-control')).toBe('no-store');
  expect(refused.headers.get('referrer-policy')).toBe('no-referrer');
  expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'");
  const body = await refused.text();
  expect(body).not.toContain('nope');
  expect(body).not.toContain('<script');
});
