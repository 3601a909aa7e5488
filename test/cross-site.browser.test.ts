import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';
import { useDemoWithBrowser } from './support/demo-with-browser.ts';
import { collect } from './support/events.ts';
import { listen, type Listening } from './support/listen.ts';

/** The demo in development mode (anonymous callers), the setting these attacks aim at. */
const demo = useDemoWithBrowser();

describe('cross-site requests', () => {
  let attacker: Listening;
  beforeAll(async () => {
    // Another origin (another port): the page an attacker would lure a developer to.
    attacker = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>attacker</title>');
    });
  });
  afterAll(async () => {
    await attacker?.close();
  });

  test('a no-cors reset (and cancel, clear, compact, a text/plain message) from another origin is refused; the session goes on', async () => {
    const client = demo.client;
    const { session, response } = await client.sessions.create({ message: 'hello' });
    expect((await response!.result()).message).toBe('Echo: hello');
    const before = await collect(session.stream({ startIndex: 0, follow: false }));

    const context = await demo.browser.newContext();
    try {
      const page = await context.newPage();
      const statuses: Record<string, number> = {};
      page.on('response', (answer) => {
        if (answer.url().startsWith(demo.bridge.url)) statuses[new URL(answer.url()).pathname] = answer.status();
      });
      await page.goto(attacker.url);
      const sessionUrl = `${demo.bridge.url}/eve/v1/session/${session.state.sessionId}`;
      await page.evaluate(async (base) => {
        for (const control of ['reset', 'cancel', 'clear', 'compact']) await fetch(`${base}/${control}`, { method: 'POST', mode: 'no-cors' });
        await fetch(base, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ message: 'injected' }) });
      }, sessionUrl);
      const path = new URL(sessionUrl).pathname;
      expect(statuses).toEqual({ [`${path}/reset`]: 415, [`${path}/cancel`]: 415, [`${path}/clear`]: 415, [`${path}/compact`]: 415, [path]: 415 });
    } finally {
      await context.close();
    }

    expect(await collect(session.stream({ startIndex: 0, follow: false }))).toEqual(before);
    const next = await session.send('still mine');
    expect((await next.result()).message).toBe('Echo: still mine');
  });

  test('a foreign Host is refused with 421 on HTTP (every route) and on the WebSocket upgrade', async () => {
    const { port } = new URL(demo.bridge.url);
    const session = (await demo.client.sessions.create({ message: 'hi' })).session;
    for (const path of ['/', '/eve/v1/health', '/eve/v1/info', `/eve/v1/session/${session.state.sessionId}/stream?follow=false`, '/eve/v1/oauth/start/att_x']) {
      const answer = await rawGet(demo.bridge.url, path, { host: `rebind.attacker.example:${port}` });
      expect([path, answer.status]).toEqual([path, 421]);
      expect(JSON.parse(answer.body)).toEqual({ ok: false, code: 'misdirected_request', error: expect.any(String) });
    }
    expect((await rawGet(demo.bridge.url, '/eve/v1/health', { host: `localhost:${port}` })).status).toBe(200);

    const wsUrl = `${demo.bridge.url.replace('http', 'ws')}/eve/v1/session/${session.state.sessionId}/ws?follow=false`;
    const rebound = await upgrade(wsUrl, { host: `rebind.attacker.example:${port}`, origin: `http://rebind.attacker.example:${port}` });
    expect(rebound).toEqual({ status: 421, body: { ok: false, code: 'misdirected_request', error: expect.any(String) } });
    // The right Host but a page from another origin: the Origin is compared with the public origin, not with Host.
    const foreign = await upgrade(wsUrl, { origin: attacker.url });
    expect(foreign).toEqual({ status: 403, body: { ok: false, code: 'forbidden', error: expect.any(String) } });
    expect(await upgrade(wsUrl, { origin: demo.bridge.publicUrl })).toEqual({ status: 101 });
  });
});

function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, base), { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject).end();
  });
}

/** Opens a WebSocket with these headers: 101, or the refusal's status and JSON body. */
function upgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body?: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'eve.v1', { headers });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101 });
    });
    ws.on('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(body) }));
    });
    ws.on('error', reject);
  });
}
