import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { eventCount, parkOnSignIn } from './support/parked.ts';

const TOKEN = 'sign-in-owner-token-0123456789';

let guarded: DemoBridge;
let browser: Browser;

beforeAll(async () => {
  [guarded, browser] = await Promise.all([startDemoBridge({ auth: bearerTokens({ [TOKEN]: 'alice' }) }), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await guarded?.close();
});

type AnyEvent = { type: string; data: Record<string, unknown> };

describe('a sign-in link belongs to the first browser that opens it', () => {
  test('a second browser is refused and changes nothing; the first still completes; the events name the principal', async () => {
    const client = new Client({ host: guarded.url, auth: { bearer: TOKEN } });
    const parked = await parkOnSignIn(client);
    const first = await browser.newContext();
    const second = await browser.newContext();
    try {
      const firstPage = await first.newPage();
      await firstPage.goto(parked.startUrl);
      await firstPage.getByRole('button', { name: 'Approve' }).waitFor();
      const before = await eventCount(parked.session);

      const secondPage = await second.newPage();
      const refused = await secondPage.goto(parked.startUrl);
      expect(refused?.status()).toBe(409);
      expect(await secondPage.textContent('p')).toMatch(/already opened in another browser/);
      expect(await second.cookies()).toEqual([]);
      expect(await eventCount(parked.session)).toBe(before);

      // The owner may open its link again (a reload, a second tab) and go on.
      const again = await first.newPage();
      await again.goto(parked.startUrl);
      await again.getByRole('button', { name: 'Approve' }).waitFor();
      await again.close();

      await Promise.all([firstPage.waitForURL(/\/oauth\/result\/connected$/), firstPage.getByRole('button', { name: 'Approve' }).click()]);
      const result = await parked.result;
      expect(result.message).toBe('Tool connection__demo__whoami returned: demo-user');
      const events = result.events as unknown as AnyEvent[];
      expect(events.find((e) => e.type === 'authorization.required')?.data.principalId).toBe('alice');
      expect(events.find((e) => e.type === 'authorization.completed')?.data).toMatchObject({ outcome: 'authorized', principalId: 'alice' });
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

