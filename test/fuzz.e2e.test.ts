import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Client } from 'eve/client';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';

/**
 * Malformed requests, generated from a fixed seed, against the real bridge (the CLI's embedded
 * demo in its own process): every route, the WebSocket upgrade, and bytes Node cannot parse.
 * Whatever arrives, the answer is a 4xx (or a success), never a 5xx; every JSON error is in Eve's
 * shape; HTML only from the browser sign-in routes; no stack trace in the log; the process lives;
 * and sessions written before replay byte for byte afterwards.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 0xe7e);
const REQUESTS = 1_200;
const UPGRADES = 200;
const PARALLEL = 8;

let bridge: CliBridge;
let host: string;

beforeAll(async () => {
  bridge = await startCliBridge();
  host = new URL(bridge.url).host;
}, 60_000);

afterAll(async () => {
  await bridge?.stop();
});

/** mulberry32: small, seeded, good enough to pick cases. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Its content-length promises more than it sends. */
  lies?: boolean;
}

const OAUTH_PAGES = /^\/eve\/v1\/oauth\/(start\/|callback|result\/)/;

/** Sends one request; undefined when it was cut off on purpose (a body that lies about its length). */
function send(request: FuzzRequest, agent: Agent): Promise<Answer | undefined> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port: new URL(bridge.url).port, agent, method: request.method, path: request.path, headers: request.headers }, (response) => {
      const chunks: Buffer[] = [];
      const done = () => resolve({ status: response.statusCode!, contentType: String(response.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') });
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', done);
      response.on('close', done);
      // Streams answer with NDJSON until the session ends; a bounded read is enough.
      if (String(response.headers['content-type']).includes('ndjson')) setTimeout(() => response.destroy(), 200).unref();
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => (request.lies ? resolve(undefined) : reject(error)));
    if (request.lies) {
      // The body never completes: the bridge waits for it, the caller gives up and hangs up.
      outgoing.write(request.body ?? '');
      setTimeout(() => outgoing.destroy(), 300).unref();
      return;
    }
    outgoing.end(request.body);
  });
}

/** A raw exchange on a fresh socket: what the bridge wrote until it closed (or 1 s passed). */
function raw(bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(bridge.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (Buffer.concat(chunks).toString('latin1').startsWith('HTTP/1.1 101')) socket.destroy();
    });
    socket.on('close', done);
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? done() : reject(error)));
    socket.setTimeout(1_000, () => socket.destroy());
    socket.end(bytes);
  });
}

function parseRaw(text: string): Answer {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const contentType = /\r\ncontent-type: ([^\r\n]*)/i.exec(head)?.[1] ?? '';
  let body = rest.join('\r\n\r\n');
  if (/\r\ntransfer-encoding: chunked/i.test(head)) {
    let decoded = '';
    for (let at = 0, size = 1; size > 0; ) {
      const eol = body.indexOf('\r\n', at);
      size = parseInt(body.slice(at, eol), 16) || 0;
      decoded += body.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    body = decoded;
  }
  return { status, contentType, body };
}

/** Every error is `{ok:false, error, code}` and nothing else, or (browser sign-in routes only) an HTML page. */
function checkAnswer(request: { method: string; path: string }, answer: Answer, problems: string[]): void {
  const label = `${request.method} ${request.path.slice(0, 80)} → ${answer.status}`;
  if (answer.status === 0) return void problems.push(`${label}: no HTTP answer`);
  if (answer.status >= 500) return void problems.push(`${label}: ${answer.body.slice(0, 200)}`);
  if (answer.status < 400 || request.method === 'HEAD') return;
  if (answer.contentType.startsWith('text/html')) {
    if (!OAUTH_PAGES.test(request.path)) problems.push(`${label}: an HTML error outside the sign-in pages`);
    return;
  }
  try {
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    const shaped = Object.keys(body).sort().join() === 'code,error,ok' && body.ok === false && typeof body.error === 'string' && typeof body.code === 'string';
    if (!shaped) problems.push(`${label}: not Eve's error shape: ${answer.body.slice(0, 200)}`);
  } catch {
    problems.push(`${label}: not JSON: ${answer.body.slice(0, 200)}`);
  }
}

const streamText = async (sessionId: string) => (await fetch(`${bridge.url}/eve/v1/session/${sessionId}/stream?follow=false`)).text();

test('malformed requests over every route and the WebSocket upgrade: no 5xx, Eve’s error shape, the process lives, old sessions replay byte for byte', async () => {
  const client = new Client({ host: bridge.url });
  const old: string[] = [];
  for (const message of ['before the storm', '/tool connection__demo__echo {"text":"kept"}']) {
    const { session, response } = await client.sessions.create({ message });
    await response!.result();
    old.push(session.state.sessionId);
  }
  const before = await Promise.all(old.map(streamText));
  // A session the fuzzer may address with ids that exist (its controls may really run).
  const target = (await client.sessions.create({ message: 'target' })).session.state.sessionId;

  const pick = random(SEED);
  const one = <T>(items: readonly T[]): T => items[Math.floor(pick() * items.length)]!;
  const ids = ['%ff', '%', '%E0%A4%A', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '..%2F..%2Fetc', 'x'.repeat(4000), '%00', 'ses_%C3%A9', target, 'ses_missing', ''];
  const names = ['demo', 'nope', '__proto__', 'constructor', '%ff', '..', 'x'.repeat(500)];
  const queries = ['', '?startIndex=abc', '?startIndex=1&startIndex=2', '?follow=maybe', '?startIndex=-99999999999999999999', '?sessionId=__proto__', '?sessionId[]=a', '?%ff=1', '?code=x&state=__proto__.x', '?state=' + 'a'.repeat(3000), '?follow=false&includeTailIndex=1'];
  const routes = (id: string, name: string) => [
    ['GET', '/'],
    ['GET', `/${id}`],
    ['GET', '/eve/v1/health'],
    ['GET', '/eve/v1/info'],
    ['POST', '/eve/v1/session'],
    ['POST', `/eve/v1/session/${id}`],
    ['POST', `/eve/v1/session/${id}/cancel`],
    ['POST', `/eve/v1/session/${id}/clear`],
    ['POST', `/eve/v1/session/${id}/compact`],
    ['POST', `/eve/v1/session/${id}/reset`],
    ['GET', `/eve/v1/session/${id}/stream`],
    ['GET', `/eve/v1/session/${id}/ws`],
    ['GET', '/eve/v1/connections'],
    ['DELETE', `/eve/v1/connections/${name}/authorization`],
    ['GET', `/eve/v1/oauth/start/${id}`],
    ['GET', '/eve/v1/oauth/callback'],
    ['GET', `/eve/v1/oauth/result/${name}`],
    ['GET', `/eve/v1/${id}`],
  ] as const;
  const contentTypes = ['application/json', 'application/json; charset=utf-16', 'application/json; charset=bogus', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/*', ';;;', 'application/json;;charset'];
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const bodies: (() => Buffer | string)[] = [
    () => '{"message":',
    () => '{"message":"hi"',
    () => 'null',
    () => '"just a string"',
    () => '[1,2,3]',
    () => '{"__proto__":{"ok":true},"message":"p"}',
    () => '{"constructor":{"prototype":{"x":1}},"message":"c"}',
    () => JSON.stringify({ message: 42 }),
    () => JSON.stringify({ message: [] }),
    () => JSON.stringify({ message: Array.from({ length: 300 }, () => ({ type: 'text', text: 'x' })) }),
    () => JSON.stringify({ message: [{ type: 'file', mediaType: 'text/plain', data: '%%%' }] }),
    () => JSON.stringify({ message: [{ type: 'file', mediaType: 'text/plain', data: 'data:text/plain,%zz' }] }),
    () => JSON.stringify({ message: [{ type: 'image', image: 'http://[::1' }] }),
    () => JSON.stringify({ message: 'hi', clientContext: JSON.parse(deep(40)) }),
    () => `{"message":"hi","clientContext":${deep(5000)}}`,
    () => JSON.stringify({ inputResponses: [{ requestId: '__proto__', optionId: 'approve' }] }),
    () => JSON.stringify({ inputResponses: [{ requestId: 'r', text: 'a'.repeat(1024 * 1024 + 1) }] }),
    () => JSON.stringify({ message: 'a'.repeat(1024 * 1024 + 1) }),
    () => JSON.stringify({ turnId: { $gt: '' } }),
    () => JSON.stringify({ reason: 7 }),
    () => JSON.stringify({ message: 'hi', turnPolicy: 'interrupt' }),
    () => JSON.stringify({ message: 'hi', operationId: 'x'.repeat(300) }),
    () => Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0xc3, 0x28]),
    () => '\ufeff{"message":"bom"}',
    () => '1e999999',
    () => '{"message":"\\ud800"}',
    () => '',
  ];
  const encodings = [undefined, undefined, undefined, 'gzip', 'deflate', 'br', 'identity', 'x-garbage', 'gzip, gzip', '__proto__', 'constructor'];
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

  function nextRequest(): FuzzRequest {
    const [routeMethod, routePath] = one(routes(one(ids), one(names)));
    const method = pick() < 0.85 ? routeMethod : one(methods);
    // One socket per request: a socket reused after a refused body would blur which request was answered.
    const headers: Record<string, string> = { connection: 'close', host: pick() < 0.9 ? host : one(['evil.example', `evil.example:${new URL(bridge.url).port}`, '', '[::1', 'localhost.evil.example']) };
    let body: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD' && pick() < 0.8) {
      const made = one(bodies)();
      body = Buffer.isBuffer(made) ? made : Buffer.from(made);
      const encoding = one(encodings);
      if (encoding) {
        headers['content-encoding'] = encoding;
        if (encoding === 'gzip' && pick() < 0.5) body = gzipSync(body);
        else if (encoding !== 'identity') body = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), body]); // a header, then garbage
      }
    }
    const lies = body !== undefined && pick() < 0.05;
    if (lies) headers['content-length'] = String(body!.length + 1 + Math.floor(pick() * 10));
    if (method !== 'GET' && pick() < 0.8) headers['content-type'] = one(contentTypes);
    if (pick() < 0.2) headers.origin = one(['null', 'https://evil.example', bridge.url]);
    if (pick() < 0.1) headers.cookie = `eve_oauth_${one(ids)}=${one(ids)}`;
    if (pick() < 0.1) headers.authorization = one(['Bearer', 'Bearer x', 'Basic %%%', 'Bearer ' + 'a'.repeat(5000)]);
    return { method, path: routePath + one(queries), headers, ...(body ? { body } : {}), ...(lies ? { lies } : {}) };
  }

  function nextUpgrade(): string {
    const path = one([`/eve/v1/session/${one(ids)}/ws`, `/eve/v1/session/${target}/ws`, '/eve/v1/session', '/', `/eve/v1/session/${target}/stream`]) + one(queries);
    const lines = [
      `${pick() < 0.9 ? 'GET' : one(methods)} ${path} HTTP/1.1`,
      `host: ${pick() < 0.85 ? host : 'evil.example'}`,
      'connection: Upgrade',
      'upgrade: websocket',
    ];
    const key = one(['dGhlIHNhbXBsZSBub25jZQ==', 'dGhlIHNhbXBsZSBub25jZQ==', 'short', '', '!!!!!!!!!!!!!!!!!!!!!!==', 'dGhlIHNhbXBsZSBub25jZQ']);
    if (pick() < 0.9) lines.push(`sec-websocket-key: ${key}`);
    if (pick() < 0.9) lines.push(`sec-websocket-version: ${one(['13', '13', '8', '7', 'abc', ''])}`);
    if (pick() < 0.7) lines.push(`sec-websocket-protocol: ${one(['eve.v1', 'eve.v1', 'eve.v1, bearer.abc', 'other', 'eve.v1, ,', 'eve.v1, eve.v1', '"eve.v1"', 'bearer.only'])}`);
    if (pick() < 0.3) lines.push(`origin: ${one(['https://evil.example', 'null', bridge.url, 'http://localhost:1'])}`);
    if (pick() < 0.2) lines.push(`sec-websocket-extensions: ${one(['permessage-deflate', 'garbage;;;', 'x=1'])}`);
    return `${lines.join('\r\n')}\r\n\r\n`;
  }

  const problems: string[] = [];
  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const agent = new Agent({ keepAlive: false, maxSockets: PARALLEL });
  const queue = Array.from({ length: REQUESTS }, nextRequest);
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let request = queue.shift(); request; request = queue.shift()) {
        const answer = await send(request, agent).catch((error: Error) => {
          problems.push(`${request.method} ${request.path.slice(0, 80)} ${JSON.stringify(request.headers).slice(0, 300)}: ${error.message} ${JSON.stringify(String((error as { rawPacket?: unknown }).rawPacket ?? '')).slice(0, 400)}`);
          return undefined;
        });
        if (!answer) continue;
        count(answer.status);
        checkAnswer(request, answer, problems);
      }
    }),
  );

  const upgrades = Array.from({ length: UPGRADES }, nextUpgrade);
  const unparseable = [
    'GARBAGE\r\n\r\n',
    'GET / HTTP/9.9\r\n\r\n',
    'GET /eve/v1/health HTTP/1.1\r\nhost: ' + host + '\r\nbad header line\r\n\r\n',
    'GET /eve/v1/health HTTP/1.1\r\nhost: ' + host + '\r\nx: ' + 'a'.repeat(20_000) + '\r\n\r\n',
    'POST /eve/v1/session HTTP/1.1\r\nhost: ' + host + '\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
    'GET /%ff HTTP/1.1\r\nhost: ' + host + '\r\nconnection: close\r\n\r\n',
    'GET \u0000 HTTP/1.1\r\n\r\n',
  ];
  for (let i = 0; i < upgrades.length; i += PARALLEL) {
    const batch = upgrades.slice(i, i + PARALLEL);
    const answers = await Promise.all(batch.map(raw));
    batch.forEach((sent, n) => {
      const answer = parseRaw(answers[n]!);
      count(answer.status);
      checkAnswer({ method: 'UPGRADE', path: sent.split(' ')[1] ?? '' }, answer, problems);
    });
  }
  for (const bytes of unparseable) {
    const answer = parseRaw(await raw(bytes));
    count(answer.status);
    if (answer.status !== 0) checkAnswer({ method: 'RAW', path: JSON.stringify(bytes.slice(0, 40)) }, answer, problems);
  }

  const total = [...statuses.values()].reduce((a, b) => a + b, 0);
  console.log(`fuzz seed ${SEED}: ${total} answers`, Object.fromEntries([...statuses].sort(([a], [b]) => a - b)));
  expect(problems).toEqual([]);
  expect(total).toBeGreaterThanOrEqual(1_000);
  expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);

  // Still alive and serving; nothing logged a stack trace or an error.
  expect(bridge.child.exitCode).toBeNull();
  expect((await fetch(`${bridge.url}/eve/v1/health`)).status).toBe(200);
  const { response } = await client.sessions.create({ message: 'after the storm' });
  expect((await response!.result()).message).toBe('Echo: after the storm');
  expect(await Promise.all(old.map(streamText))).toEqual(before);
  const loud = bridge.logs.filter((entry) => Number(entry.level) >= 50 || JSON.stringify(entry).includes('"stack"'));
  expect(loud).toEqual([]);
}, 120_000);
