import { once } from 'node:events';
import { get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterEach, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import WebSocket from 'ws';
import { bearerTokens, type Logger } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';
import { startCompatBridge, type RunningBridge } from './support/compat-bridge.ts';
import { recordingLogger } from './support/logs.ts';

const bridges: RunningBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
});

async function bridge(options: Parameters<typeof startCompatBridge>[0] = {}): Promise<RunningBridge> {
  const started = await startCompatBridge(options);
  bridges.push(started);
  return started;
}

const TOKEN = 'ws-test-token-0123456789';

const wsUrl = (running: RunningBridge, sessionId: string, query = '') =>
  `${running.url.replace(/^http/, 'ws')}/eve/v1/session/${encodeURIComponent(sessionId)}/ws${query ? `?${query}` : ''}`;

/** Every frame of one connection, in order, with the close code and reason. */
class Frames {
  readonly frames: string[] = [];
  readonly errors: Error[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<IncomingMessage>;
  #waiters: { match: (frame: string) => boolean; resolve: (frame: string) => void }[] = [];

  readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('error', (error) => this.errors.push(error));
    this.opened = new Promise((resolve) => ws.once('upgrade', resolve));
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
    ws.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      const frame = String(data);
      this.frames.push(frame);
      this.#waiters = this.#waiters.filter((w) => (w.match(frame) ? (w.resolve(frame), false) : true));
    });
  }

  /** The first frame (already seen or still to come) that `match` accepts. */
  until(match: (frame: string) => boolean): Promise<string> {
    const seen = this.frames.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  get events(): { type: string; streamIndex: number }[] {
    return this.frames.map((f) => JSON.parse(f)).filter((r) => r.$eve === undefined);
  }
}

function open(url: string, protocols?: string[], options?: WebSocket.ClientOptions): Frames {
  return new Frames(new WebSocket(url, protocols, options));
}

/** Reads a bounded stream to its close. */
async function readToClose(url: string, protocols?: string[]) {
  const frames = open(url, protocols);
  const { code, reason } = await frames.closed;
  return { frames: frames.frames, code, reason };
}

/** A refused upgrade: the HTTP status, headers and JSON body. */
async function refusal(url: string, protocols?: string[]) {
  const ws = new WebSocket(url, protocols);
  ws.on('error', () => undefined);
  const [, response] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
  let text = '';
  for await (const chunk of response) text += String(chunk);
  ws.terminate();
  return { status: response.statusCode, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

async function ndjson(running: RunningBridge, sessionId: string, query: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${running.url}/eve/v1/session/${sessionId}/stream?${query}`, { headers });
  expect(response.status).toBe(200);
  const lines = (await response.text()).split('\n').filter((line) => line !== '');
  return { lines, tailIndex: response.headers.get('x-eve-stream-tail-index') };
}

const tailFrame = (tailIndex: number) => JSON.stringify({ $eve: 'stream.tail-index', version: 1, tailIndex });

test('bounded reads: the frames are the NDJSON lines, byte for byte, for absolute and negative cursors', async () => {
  const running = await bridge();
  const client = new Client({ host: running.url });
  const { session, response } = await client.sessions.create({ message: 'one' });
  await response!.result();
  await (await session.send('two')).result();
  const tail = await running.compat.journal.tail(session.state.sessionId);
  expect(tail).toBeGreaterThan(10);

  for (const query of ['startIndex=0&follow=false', `startIndex=${Math.floor(tail / 2)}&follow=false`, 'startIndex=-1&follow=false', 'startIndex=-3&follow=false', 'startIndex=4&includeTailIndex=1', `startIndex=${tail + 5}&follow=false`]) {
    const http = await ndjson(running, session.state.sessionId, query);
    const ws = await readToClose(wsUrl(running, session.state.sessionId, query));
    expect(http.tailIndex).toBe(String(tail));
    expect(ws.frames[0]).toBe(tailFrame(Number(http.tailIndex)));
    expect(ws.frames.slice(1)).toEqual(http.lines);
    expect(ws.code).toBe(1000);
  }
  const fromMiddle = await readToClose(wsUrl(running, session.state.sessionId, `startIndex=${Math.floor(tail / 2)}&follow=false`));
  expect(fromMiddle.frames.slice(1).map((f) => JSON.parse(f).streamIndex)[0]).toBe(Math.floor(tail / 2));
  const lastThree = await readToClose(wsUrl(running, session.state.sessionId, 'startIndex=-3&follow=false'));
  expect(lastThree.frames.slice(1).map((f) => JSON.parse(f).streamIndex)).toEqual([tail - 2, tail - 1, tail]);
});

test('a live follow sees a new turn as it is journaled and closes with 1000 after session.completed', async () => {
  const running = await bridge();
  const client = new Client({ host: running.url });
  const { session, response } = await client.sessions.create({ message: 'first' });
  await response!.result();
  const start = (await running.compat.journal.tail(session.state.sessionId)) + 1;

  const live = open(wsUrl(running, session.state.sessionId, `startIndex=${start}`), ['eve.v1']);
  expect((await live.opened).headers['sec-websocket-protocol']).toBe('eve.v1');
  await session.send('/sleep 20000');
  // The turn runs for 20 s: a delta can only be here because it was pushed as it was journaled.
  await live.until((f) => JSON.parse(f).type === 'message.appended');
  await session.reset();
  await live.until((f) => JSON.parse(f).type === 'session.completed');
  const closed = await live.closed;
  expect(closed.code).toBe(1000);
  expect(live.frames[0]).not.toContain('stream.tail-index');
  const types = live.events.map((e) => e.type);
  expect(types[0]).toBe('turn.started');
  expect(types).toContain('turn.cancelled');
  expect(types.at(-1)).toBe('session.completed');
  expect(live.events.map((e) => e.streamIndex)).toEqual(live.events.map((_, i) => start + i));
  const http = await ndjson(running, session.state.sessionId, `startIndex=${start}&follow=false`);
  expect(live.frames).toEqual(http.lines);
});

test('auth: the bearer token comes as a subprotocol or access_token, refusals are JSON before the upgrade', async () => {
  const logger = recordingLogger();
  const running = await bridge({ auth: bearerTokens({ [TOKEN]: 'svc' }), logger });
  const created = await fetch(`${running.url}/eve/v1/session`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  const { sessionId } = (await created.json()) as { sessionId: string };
  await running.compat.journal.append(sessionId, [{ type: 'session.started', data: {} }]);
  const url = wsUrl(running, sessionId, 'follow=false');

  const anonymous = await refusal(url, ['eve.v1']);
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers['www-authenticate']).toBe('Bearer');
  expect(anonymous.body).toEqual({ ok: false, code: 'unauthorized', error: expect.any(String) });
  expect((await refusal(url, ['eve.v1', 'bearer.wrong-token-0123456789'])).status).toBe(401);
  expect((await refusal(`${url}&access_token=wrong-token-0123456789`)).status).toBe(401);

  const viaProtocol = open(url, ['eve.v1', `bearer.${TOKEN}`]);
  const upgrade = await viaProtocol.opened;
  expect(upgrade.headers['sec-websocket-protocol']).toBe('eve.v1');
  expect(viaProtocol.ws.protocol).toBe('eve.v1');
  expect(await viaProtocol.closed).toEqual({ code: 1000, reason: 'tail reached' });
  expect(viaProtocol.events.map((e) => e.type)).toEqual(['session.started']);

  const viaQuery = await readToClose(`${url}&access_token=${TOKEN}`);
  expect(viaQuery.code).toBe(1000);
  expect(viaQuery.frames).toEqual([tailFrame(0), expect.stringContaining('"session.started"')]);

  // A header still works for clients that can set one.
  const viaHeader = new Frames(new WebSocket(url, { headers: { authorization: `Bearer ${TOKEN}` } }));
  expect((await viaHeader.closed).code).toBe(1000);

  // Offering only the bearer protocol (no eve.v1) is refused rather than echoing it.
  expect((await refusal(url, [`bearer.${TOKEN}`])).status).toBe(400);
  expect(logger.text()).not.toContain(TOKEN);
  expect(logger.text()).not.toContain('access_token');
});

test('refusals: unknown session 404, bad startIndex 400, expired 410, other upgrade paths a 404, foreign origins 403', async () => {
  let now = Date.now();
  const running = await bridge({ retentionMs: 60_000, clock: () => now });
  const missing = await refusal(wsUrl(running, 'ses_missing'));
  expect(missing.status).toBe(404);
  expect(missing.body).toMatchObject({ ok: false, code: 'session_not_found' });

  const client = new Client({ host: running.url });
  const { session, response } = await client.sessions.create({ message: 'short-lived' });
  await response!.result();
  for (const bad of ['startIndex=abc', 'startIndex=1.5', 'follow=maybe']) {
    const refused = await refusal(wsUrl(running, session.state.sessionId, bad));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ ok: false, code: 'invalid_request' });
  }

  const elsewhere = await refusal(`${running.url.replace(/^http/, 'ws')}/eve/v1/session/${session.state.sessionId}/stream`);
  expect(elsewhere.status).toBe(404);
  expect(elsewhere.body).toEqual({ ok: false, code: 'not_found', error: expect.any(String) });

  const fromOtherSite = new WebSocket(wsUrl(running, session.state.sessionId), { origin: 'https://evil.example' });
  fromOtherSite.on('error', () => undefined);
  const [, forbidden] = (await once(fromOtherSite, 'unexpected-response')) as [unknown, IncomingMessage];
  expect(forbidden.statusCode).toBe(403);
  fromOtherSite.terminate();
  const sameSite = new Frames(new WebSocket(wsUrl(running, session.state.sessionId, 'follow=false'), { origin: running.url }));
  expect((await sameSite.closed).code).toBe(1000);

  await session.reset();
  now += 61_000;
  const expired = await refusal(wsUrl(running, session.state.sessionId));
  expect(expired.status).toBe(410);
  expect(expired.body).toMatchObject({ ok: false, code: 'session_expired' });
});

test('a slow reader is cut off with 4008 and resumes from the index it is given without losing an event', async () => {
  let cutOff!: () => void;
  const slowReaderCut = new Promise<void>((resolve) => (cutOff = resolve));
  const logger: Logger = {
    ...recordingLogger(),
    info: (_fields, message) => {
      if (message === 'slow websocket reader cut off') cutOff();
    },
  };
  const running = await bridge({ logger, stream: { maxBufferedBytes: 64 * 1024, slowReaderGraceMs: 200 } });
  const { sessionId } = (await (await fetch(`${running.url}/eve/v1/session`, { method: 'POST' })).json()) as { sessionId: string };
  const total = 4_000;
  const delta = 'x'.repeat(8 * 1024);
  for (let batch = 0; batch < total / 500; batch += 1) {
    const drafts: EveEventDraft[] = Array.from({ length: 500 }, (_, i) => ({
      type: 'message.appended',
      data: { sequence: 0, turnId: 'turn_0', stepIndex: 0, messageDelta: `${batch * 500 + i}:${delta}` },
    }));
    await running.compat.journal.append(sessionId, drafts);
  }
  expect(await running.compat.journal.tail(sessionId)).toBe(total - 1);

  // ~32 MB the client does not read: the kernel buffers fill, then the server's queue, then it gives up.
  const slow = open(wsUrl(running, sessionId, 'startIndex=0&follow=false'));
  await slow.opened;
  slow.ws.pause();
  await slowReaderCut;
  slow.ws.resume();
  const first = await slow.closed;
  expect(first.code).toBe(4008);
  const resumeAt = Number(/^slow reader: resume at startIndex=(\d+)$/.exec(first.reason)?.[1]);
  const firstIndexes = slow.events.map((e) => e.streamIndex);
  expect(resumeAt).toBeGreaterThan(0);
  expect(resumeAt).toBeLessThan(total);
  expect(firstIndexes.at(-1)).toBe(resumeAt - 1);

  // A reading client resumes where it is told, as often as it is told (a loaded machine can
  // still fall behind the tiny limit this test sets), until the tail closes the stream with 1000.
  const all = [...firstIndexes];
  for (let from = resumeAt; ; ) {
    const rest = open(wsUrl(running, sessionId, `startIndex=${from}&follow=false`));
    const closed = await rest.closed;
    all.push(...rest.events.map((e) => e.streamIndex));
    if (closed.code === 1000) break;
    expect(closed.code).toBe(4008);
    from = Number(/^slow reader: resume at startIndex=(\d+)$/.exec(closed.reason)?.[1]);
    expect(from).toBe(all.at(-1)! + 1);
  }
  expect(all).toEqual(Array.from({ length: total }, (_, i) => i));
});

test('liveness: pings keep an answering peer, a peer that misses a pong is terminated', async () => {
  const running = await bridge({ stream: { heartbeatMs: 100 } });
  const { sessionId } = (await (await fetch(`${running.url}/eve/v1/session`, { method: 'POST' })).json()) as { sessionId: string };

  const answering = open(wsUrl(running, sessionId));
  for (let i = 0; i < 3; i += 1) await once(answering.ws, 'ping');
  expect(answering.ws.readyState).toBe(WebSocket.OPEN);
  answering.ws.close();
  await answering.closed;

  // A raw client that completes the handshake and then never answers a ping.
  const socket = await mutePeer(running, sessionId);
  await once(socket, 'close');
});

/** A raw client that completes the handshake and then answers nothing (no pong, no close). */
async function mutePeer(running: RunningBridge, sessionId: string) {
  const { port } = new URL(running.url);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    `GET /eve/v1/session/${sessionId}/ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  const [head] = (await once(socket, 'data')) as [Buffer];
  expect(head.toString('latin1')).toMatch(/^HTTP\/1\.1 101 /);
  socket.resume();
  return socket;
}

test('closing the WebSockets: open streams close with 1001, a peer that does not answer is terminated, new upgrades get 503', async () => {
  const running = await bridge();
  const { sessionId } = (await (await fetch(`${running.url}/eve/v1/session`, { method: 'POST' })).json()) as { sessionId: string };
  const answering = open(wsUrl(running, sessionId));
  await answering.opened;
  const mute = await mutePeer(running, sessionId);
  const muteClosed = once(mute, 'close');

  const started = Date.now();
  await running.compat.closeWebSockets();
  expect((await answering.closed).code).toBe(1001);
  await muteClosed;
  expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  expect((await refusal(wsUrl(running, sessionId))).status).toBe(503);
});

test('only WebSocket upgrades are taken over: an h2c upgrade on an ordinary route is served as usual', async () => {
  const running = await bridge();
  const request = get(`${running.url}/eve/v1/health`, {
    headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA' },
  });
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of response) text += String(chunk);
  expect(response.statusCode).toBe(200);
  expect(JSON.parse(text)).toMatchObject({ ok: true, status: 'ready' });
});
