/**
 * A browser app on another origin (as a `useEveAgent` app would be) drives a bridge configured
 * with nothing but CORS_ORIGINS: sessions, the NDJSON stream and the WebSocket stream.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/browser.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { listen, type Listening } from './support/listen.ts';

let allowed: Listening;
let foreign: Listening;
let bridge: CliBridge;
let browser: Browser;

/** An app origin of its own: a blank page to run the app's code in. */
function appOrigin(): Promise<Listening> {
  const app = express();
  app.get('/', (_request, response) => void response.type('html').send('<!doctype html><title>app</title>'));
  return listen(app);
}

beforeAll(async () => {
  [allowed, foreign, browser] = await Promise.all([appOrigin(), appOrigin(), launchChromium()]);
  bridge = await startCliBridge({ CORS_ORIGINS: `https://elsewhere.example, ${allowed.url}` });
});

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  await Promise.all([allowed?.close(), foreign?.close()]);
});

async function pageAt(origin: Listening): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin.url}/`);
  return page;
}

/** What the app's code sees when it talks to the bridge: a turn over NDJSON, then the stream over a WebSocket. */
function converse(page: Page, bridgeUrl: string) {
  return page.evaluate(async (api) => {
    const created = await fetch(`${api}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hi from the app' }) });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const stream = await fetch(`${api}/session/${sessionId}/stream?startIndex=0`);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('"message.completed"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    const message = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; data: { message?: string } })
      .find((event) => event.type === 'message.completed')?.data.message;
    const frames = await new Promise<string[]>((resolve, reject) => {
      const seen: string[] = [];
      const ws = new WebSocket(`${api.replace(/^http/, 'ws')}/session/${sessionId}/ws?startIndex=0&follow=false`);
      ws.onmessage = (event) => seen.push(String(event.data));
      ws.onclose = (event) => (event.code === 1000 ? resolve(seen) : reject(new Error(`closed ${event.code}`)));
    });
    return { sessionHeader: created.headers.get('x-eve-session-id'), message, frames: frames.length };
  }, `${bridgeUrl}/eve/v1`);
}

test('an origin CORS_ORIGINS lists: sessions, the NDJSON stream and the WebSocket stream all work', async () => {
  const seen = await converse(await pageAt(allowed), bridge.url);
  expect(seen.message).toBe('Echo: hi from the app');
  expect(seen.sessionHeader).toMatch(/^ses_/);
  expect(seen.frames).toBeGreaterThan(3);
});

test('an origin it does not list is refused by the browser', async () => {
  await expect(converse(await pageAt(foreign), bridge.url)).rejects.toThrow(/Failed to fetch/);
});
