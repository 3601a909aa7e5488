import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import WebSocket from 'ws';
import { bearerTokens } from '@eve-flue/bridge';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';

let bridge: DemoBridge;
let aliceSession: string;

beforeAll(async () => {
  bridge = await startDemoBridge({ auth: bearerTokens({ [ALICE]: 'alice', [BOB]: 'bob' }), sessions: { owner: 'principal' } });
  const alice = new Client({ host: bridge.url, auth: { bearer: ALICE } });
  const { response } = await alice.sessions.create({ message: 'hello' });
  expect((await response!.result()).message).toBe('Echo: hello');
  aliceSession = response!.sessionId!;
}, 60_000);

afterAll(async () => {
  await bridge?.close();
});

/** What the client's call failed with: its HTTP status and body, or `'ok'`. */
async function outcome(call: () => Promise<unknown>): Promise<{ status: number; body: unknown } | 'ok'> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    const { status, body } = error as { status: number; body: string };
    return { status, body: JSON.parse(body) };
  }
}

async function readAll(stream: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _event of stream) n++;
  return n;
}

/** A WebSocket upgrade's answer: the status of a refusal, or 101. */
async function upgrade(sessionId: string, token: string): Promise<{ status: number; body?: unknown }> {
  const ws = new WebSocket(`${bridge.url.replace('http', 'ws')}/eve/v1/session/${sessionId}/ws?follow=false`, ['eve.v1', `bearer.${token}`]);
  ws.on('error', () => undefined);
  const first = await Promise.race([once(ws, 'open').then(() => 'open' as const), once(ws, 'unexpected-response') as Promise<[unknown, IncomingMessage]>]);
  if (first === 'open') {
    ws.close();
    return { status: 101 };
  }
  const response = first[1];
  let text = '';
  for await (const chunk of response) text += String(chunk);
  return { status: response.statusCode!, body: JSON.parse(text) };
}

test('another principal is told the session does not exist: stream, follow-up, answers, controls, WebSocket', async () => {
  const bob = new Client({ host: bridge.url, auth: { bearer: BOB } }).sessions.attach(aliceSession);
  // Without reconnecting: the client retries a 404 for a while, for a session that may be about to appear.
  const once = { streamReconnectPolicy: { reconnect: false } } as const;
  const missing = await outcome(() => readAll(new Client({ host: bridge.url, auth: { bearer: BOB } }).sessions.attach('ses_does_not_exist').stream({ follow: false, ...once })));
  expect(missing).toEqual({ status: 404, body: { ok: false, code: 'session_not_found', error: expect.any(String) } });

  expect(await outcome(() => readAll(bob.stream({ follow: false, ...once })))).toEqual(missing);
  expect(await outcome(() => readAll(bob.stream(once)))).toEqual(missing);
  expect(await outcome(() => bob.send('let me in'))).toEqual(missing);
  expect(await outcome(() => bob.respond([{ requestId: 'req_1', text: 'yes' }]))).toEqual(missing);
  expect(await outcome(() => bob.cancel())).toEqual(missing);
  expect(await outcome(() => bob.clear())).toEqual(missing);
  expect(await outcome(() => bob.compact())).toEqual(missing);
  expect(await outcome(() => bob.reset())).toEqual(missing);
  expect(await upgrade(aliceSession, BOB)).toEqual({ status: 404, body: missing === 'ok' ? undefined : missing.body });
  expect(await upgrade('ses_does_not_exist', BOB)).toEqual(await upgrade(aliceSession, BOB));
});

test('the creator still reads, follows up and streams over the WebSocket; nothing bob tried reached the session', async () => {
  const alice = new Client({ host: bridge.url, auth: { bearer: ALICE } }).sessions.attach(aliceSession);
  const response = await alice.send('again');
  expect((await response.result()).message).toBe('Echo: again');
  const history: { type: string; data?: { message?: unknown } }[] = [];
  for await (const event of alice.stream({ follow: false, startIndex: 0 })) history.push(event as never);
  const received = history.filter((e) => e.type === 'message.received').map((e) => JSON.stringify(e.data));
  expect(received).toHaveLength(2);
  expect(received.join()).not.toContain('let me in');
  expect((await upgrade(aliceSession, ALICE)).status).toBe(101);
});
