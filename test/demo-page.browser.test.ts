import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/browser.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';

let bridge: CliBridge;
let browser: Browser;

beforeAll(async () => {
  [bridge, browser] = await Promise.all([startCliBridge(), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
});

test('the embedded demo page runs a connection tool call and shows its result', async () => {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') violations.push(message.text());
  });
  await page.goto(bridge.url);
  await page.fill('#message', '/tool connection__demo__echo {"text":"hi"}');
  await page.click('#send');
  const tool = page.locator('[data-tool-name="connection__demo__echo"]');
  await tool.waitFor();
  await expect(page.locator('[data-tool-result]').first().textContent()).resolves.toContain('hi');
  await page.locator('[data-event-type="message.completed"]', { hasText: 'Tool connection__demo__echo returned: hi' }).waitFor();
  await page.locator('#status[data-state="idle"]').waitFor();
  expect(violations).toEqual([]);
  await page.close();
});

test('the demo page cancels a running turn', async () => {
  const page = await browser.newPage();
  await page.goto(bridge.url);
  await page.fill('#message', '/sleep 20000');
  await page.click('#send');
  await page.locator('#status[data-state="working"]').waitFor();
  await page.click('#cancel');
  await page.locator('[data-event-type="turn.cancelled"]').waitFor();
  await page.locator('#status[data-state="idle"]').waitFor();
  await page.close();
});

test('the demo page shows a sign-in link; approving it in the new tab resumes the turn on the page', async () => {
  const page = await browser.newPage();
  await page.goto(bridge.url);
  await page.fill('#message', '/tool connection__demo__whoami {}');
  await page.click('#send');
  const link = page.locator('[data-sign-in="demo"]');
  await link.waitFor();
  const [popup] = await Promise.all([page.waitForEvent('popup'), link.click()]);
  await Promise.all([popup.waitForURL(/\/oauth\/result\/connected/), popup.getByRole('button', { name: 'Approve', exact: true }).click()]);
  await page.locator('[data-authorization-outcome="authorized"]').waitFor();
  await page.locator('[data-event-type="message.completed"]', { hasText: 'Tool connection__demo__whoami returned: demo-user' }).waitFor();
  await page.close();
});
