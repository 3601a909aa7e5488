import { afterAll, beforeAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { launchChromium } from './browser.ts';
import { startDemoBridge, type DemoBridge } from './demo-bridge.ts';

export interface DemoWithBrowser {
  bridge: DemoBridge;
  browser: Browser;
  client: Client;
}

/** A demo bridge, Chromium and an Eve client for the tests of one file, started once. */
export function useDemoWithBrowser(): DemoWithBrowser {
  const fixture = {} as DemoWithBrowser;
  beforeAll(async () => {
    [fixture.bridge, fixture.browser] = await Promise.all([startDemoBridge(), launchChromium()]);
    fixture.client = new Client({ host: fixture.bridge.url });
  });
  afterAll(async () => {
    await fixture.browser?.close();
    await fixture.bridge?.close();
  });
  return fixture;
}
