/**
 * createBridge mounted into an author's own express server under a path prefix: the real Eve
 * client on http://host/agents (NDJSON), the WebSocket stream, and a sign-in in Chromium.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import express from 'express';
import type { Browser } from 'playwright-core';
import WebSocket from 'ws';
import { Client } from 'eve/client';
import { silentLogger } from '@eve-flue/compat-server';
import { createBridge, defineBridgeConfig, type Bridge } from '@eve-flue/bridge';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { launchChromium } from './support/browser.ts';
import { listen, type Listening } from './support/listen.ts';
import { parkOnSignIn } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

let demo: DemoStack;
let host: Listening;
let bridge: Bridge;
let browser: Browser;
let base: string;
let client: Client;

beforeAll(async () => {
  [demo, browser] = await Promise.all([startDemoStack(), launchChromium()]);
  const app = express();
  app.get('/', (_request, response) => void response.send('the author app'));
  host = await listen(app);
  base = `${host.url}/agents`;
  bridge = await createBridge(defineBridgeConfig({ ...demo.config, store: 'memory', mode: 'development', publicUrl: base }), { logger: silentLogger });
  app.use('/agents', bridge.app);
  host.server.on('upgrade', (request, socket, head) => {
    if (!bridge.handleUpgrade(request, socket, head)) socket.destroy();
  });
  client = new Client({ host: base });
});

afterAll(async () => {
  await browser?.close();
  await bridge?.compat.closeWebSockets();
  await host?.close();
  await bridge?.close();
  await demo?.close();
});

test('the real client works against http://host/agents, next to the author\'s own routes', async () => {
  const { session, response } = await client.sessions.create({ message: 'hello under a prefix' });
  expect((await response!.result()).message).toBe('Echo: hello under a prefix');
  const tool = await (await session.send('/tool connection__demo__echo {"text":"mounted"}')).result();
  expect(tool.message).toBe('Tool connection__demo__echo returned: mounted');

  expect(await (await fetch(`${host.url}/`)).text()).toBe('the author app');
  // The bridge answers only under its prefix.
  expect((await fetch(`${host.url}/eve/v1/health`)).status).toBe(404);
  expect((await fetch(`${base}/eve/v1/health`)).status).toBe(200);
});

test('the WebSocket stream under the prefix: the NDJSON lines as frames, and a live turn', async () => {
  const { session, response } = await client.sessions.create({ message: 'over a socket' });
  await response!.result();
  const id = session.state.sessionId;
  const lines = (await (await fetch(`${base}/eve/v1/session/${id}/stream?startIndex=0&follow=false`)).text()).split('\n').filter(Boolean);

  const bounded = new WebSocket(`${base.replace(/^http/, 'ws')}/eve/v1/session/${id}/ws?startIndex=0&follow=false`);
  const frames: string[] = [];
  bounded.on('message', (data) => frames.push(String(data)));
  const [code] = (await once(bounded, 'close')) as [number];
  expect(code).toBe(1000);
  expect(frames.slice(1)).toEqual(lines); // the first frame is the tail index

  const live = new WebSocket(`${base.replace(/^http/, 'ws')}/eve/v1/session/${id}/ws?startIndex=${lines.length}`);
  const seen: { type: string; data?: { message?: string } }[] = [];
  const completed = new Promise<void>((resolve) =>
    live.on('message', (data) => {
      const event = JSON.parse(String(data));
      seen.push(event);
      if (event.type === 'message.completed') resolve();
    }),
  );
  await once(live, 'open');
  await (await client.sessions.attach(id, { streamIndex: lines.length }).send('live')).result();
  await completed;
  live.close();
  expect(seen.find((e) => e.type === 'message.completed')?.data?.message).toBe('Echo: live');

  // An upgrade outside the prefix is not the bridge's: the author's listener decides (here: drop it).
  const outside = new WebSocket(`${host.url.replace(/^http/, 'ws')}/eve/v1/session/${id}/ws`);
  const [error] = (await once(outside, 'error')) as [Error];
  expect(error.message).toMatch(/socket hang up|ECONNRESET/);
});

test('a sign-in under the prefix: links, cookie and result page all stay under /agents', async () => {
  const parked = await parkOnSignIn(client);
  expect(parked.startUrl.startsWith(`${base}/eve/v1/oauth/start/`)).toBe(true);
  const page = await answerSignIn(browser, parked.startUrl, 'Approve');
  expect(page.finalUrl).toBe(`${base}/eve/v1/oauth/result/connected`);
  expect(page.text).toContain('You are signed in');
  expect((await parked.result).message).toBe('Tool connection__demo__whoami returned: demo-user');
});

test('the chat page works under the prefix too (its links and API calls are relative)', async () => {
  const page = await browser.newPage();
  await page.goto(base); // no trailing slash: redirected to /agents/
  expect(page.url()).toBe(`${base}/`);
  await page.fill('#message', '/tool connection__demo__echo {"text":"from the page"}');
  await page.click('#send');
  await page.locator('[data-event-type="message.completed"]', { hasText: 'Tool connection__demo__echo returned: from the page' }).waitFor();
  await page.close();
});

test('createBridge refuses a config without a public URL (no OAuth redirect URI) or with a typo', async () => {
  const saved = process.env.PUBLIC_URL;
  delete process.env.PUBLIC_URL;
  try {
    await expect(createBridge(defineBridgeConfig({ ...demo.config, store: 'memory' }), { logger: silentLogger })).rejects.toThrow(/createBridge needs `publicUrl`/);
    await expect(createBridge({ ...demo.config, publicUrl: base, prot: 1 } as never, { logger: silentLogger })).rejects.toThrow('`prot` is not a bridge setting');
  } finally {
    if (saved !== undefined) process.env.PUBLIC_URL = saved;
  }
});
