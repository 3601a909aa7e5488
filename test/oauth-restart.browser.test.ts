import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { silentLogger } from '@eve-flue/compat-server';
import { startBridge, type RunningBridge } from '@eve-flue/bridge';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { launchChromium } from './support/browser.ts';
import { collect } from './support/events.ts';
import { freePort } from './support/free-port.ts';
import { parkOnSignIn, WHOAMI } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

let demo: DemoStack;
let browser: Browser;
let dataDir: string;
let running: RunningBridge | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-restart-'));
  [demo, browser] = await Promise.all([startDemoStack(), launchChromium()]);
});

afterAll(async () => {
  await running?.close();
  await browser?.close();
  await demo?.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('a sign-in started before a restart completes after it, and the token is there for the next turn', async () => {
  // The same address and data folder across the restart: the provider redirects to the same bridge.
  const config = { ...demo.config, dataDir, port: await freePort(), mode: 'development' as const };
  running = await startBridge(config, { logger: silentLogger });
  const parked = await parkOnSignIn(new Client({ host: running.url }));
  await running.close();

  running = await startBridge(config, { logger: silentLogger });
    const page = await answerSignIn(browser, parked.startUrl, 'Approve');
  expect(page.finalUrl).toMatch(/\/oauth\/result\/connected$/);

  const client = new Client({ host: running.url });
  const history = await collect(client.sessions.attach(parked.session.state.sessionId).stream({ startIndex: 0, follow: false }));
  expect(history.at(-2)?.data).toMatchObject({ code: 'interrupted', terminal: false });
  const session = client.sessions.attach(parked.session.state.sessionId, { streamIndex: history.length });
  const next = await (await session.send(WHOAMI)).result();
  expect(next.message).toBe('Tool connection__demo__whoami returned: demo-user');
  expect(next.events.map((e) => e.type)).not.toContain('authorization.required');
});
