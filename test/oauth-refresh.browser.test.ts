import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { silentLogger } from '@eve-flue/compat-server';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { parkOnSignIn, WHOAMI } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

let bridge: DemoBridge;
let browser: Browser;

beforeAll(async () => {
  // Access tokens that live 30 s: always inside the bridge's one-minute refresh margin.
  [bridge, browser] = await Promise.all([startDemoBridge({}, silentLogger, { ttl: { AccessToken: 30 } }), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
});

test('a token about to expire is refreshed before use, without asking the person again', async () => {
  const parked = await parkOnSignIn(new Client({ host: bridge.url }));
  await answerSignIn(browser, parked.startUrl, 'Approve');
  expect((await parked.result).message).toBe('Tool connection__demo__whoami returned: demo-user');
  const subject = `session:${parked.session.state.sessionId}`;
  const first = (await bridge.authStore.getToken(subject, 'demo'))!;

  const next = await (await parked.session.send(WHOAMI)).result();
  expect(next.message).toBe('Tool connection__demo__whoami returned: demo-user');
  expect(next.events.map((e) => e.type)).not.toContain('authorization.required');
  const second = (await bridge.authStore.getToken(subject, 'demo'))!;
  expect(second.accessToken).not.toBe(first.accessToken);
  expect(second.refreshToken).toBe(first.refreshToken);
});
