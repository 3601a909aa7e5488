import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolveLimits } from '@eve-flue/compat-server';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';

/**
 * The bridge in its own process (the CLI's embedded demo, real Flue), measured from outside:
 * its resident set size before and after 100 messages at the largest size it accepts, and what
 * an oversized body costs it. Figures are printed; the bounds are generous (the crash this
 * guards against pinned 50–80 MiB per message and died after about 90).
 */
const MiB = 1024 * 1024;
const FILE_CAP = 25 * MiB; // DEFAULT_UPLOAD_POLICY.maxBytes
const limits = resolveLimits(FILE_CAP);

let bridge: CliBridge;

beforeAll(async () => {
  bridge = await startCliBridge();
}, 60_000);

afterAll(async () => {
  await bridge?.stop();
});

/** Resident and peak resident set size of the bridge process, from /proc, in MiB. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${bridge.child.pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** The largest message accepted: text at its limit, and a file at the upload cap, in a body just under the body limit. */
function largestBody(): Buffer {
  const body = JSON.stringify({
    message: [
      { type: 'text', text: 'a'.repeat(limits.maxTextBytes) },
      { type: 'file', mediaType: 'application/octet-stream', filename: 'big.bin', data: Buffer.alloc(FILE_CAP, 7).toString('base64') },
    ],
  });
  return Buffer.from(body);
}

const post = (path: string, body: Buffer | string) =>
  fetch(`${bridge.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

test('100 messages at the largest accepted size leave the RSS bounded', async () => {
  const body = largestBody();
  expect(body.length).toBeLessThanOrEqual(limits.maxBodyBytes);
  const before = memory();
  for (let i = 0; i < 100; i++) {
    const created = await post('/eve/v1/session', body);
    expect(created.status).toBe(202);
    const { sessionId } = (await created.json()) as { sessionId: string };
    // As in the attack: the turn is cancelled at once.
    expect((await post(`/eve/v1/session/${sessionId}/cancel`, '{}')).status).toBeLessThan(300);
  }
  const after = memory();
  console.log(
    `memory: ${(body.length / MiB).toFixed(1)} MiB bodies × 100: RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MiB ` +
      `(${((after.rss - before.rss) / 100).toFixed(1)} MiB per message), peak ${after.peak.toFixed(0)} MiB`,
  );
  expect(bridge.child.exitCode).toBeNull();
  // What grows is each session's Flue instance (docs/security.md); the crash this guards against grew 5–8 GiB.
  expect(after.rss).toBeLessThan(before.rss + 2048);
}, 600_000);

test('an oversized body gets 413 without being read: by its content-length, and while streaming one without', async () => {
  const before = memory();
  // A content-length over the limit: refused before a byte of the body is read.
  const declared = await rawExchange(
    `POST /eve/v1/session HTTP/1.1\r\nhost: ${new URL(bridge.url).host}\r\ncontent-type: application/json\r\ncontent-length: ${4 * 1024 * MiB}\r\n\r\n{"message":"`,
  );
  expect(declared.status).toBe(413);
  expect(JSON.parse(declared.body)).toEqual({ ok: false, code: 'payload_too_large', error: expect.any(String) });

  // Chunked, with no length: read only up to the limit, then refused; the sender is stopped long before 1 GiB.
  const streamed = await streamUntilRefused(1024 * MiB);
  expect(streamed.status).toBe(413);
  expect(streamed.sent).toBeLessThan(limits.maxBodyBytes + 256 * MiB);
  const after = memory();
  console.log(
    `oversized: declared 4 GiB refused at once; chunked refused after ${(streamed.sent / MiB).toFixed(0)} MiB sent (limit ${(limits.maxBodyBytes / MiB).toFixed(1)} MiB); RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MiB`,
  );
  expect(after.rss).toBeLessThan(before.rss + 512);
}, 120_000);

function parse(text: string): { status: number; body: string } {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: rest.join('\r\n\r\n') };
}

function rawExchange(request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(bridge.url).port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      const parsed = parse(answer);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(answer)?.[1] ?? -1);
      if (parsed.status && Buffer.byteLength(parsed.body) >= length) {
        socket.destroy();
        resolve(parsed);
      }
    });
    socket.on('error', reject);
    socket.write(request);
  });
}

/** Sends a chunked JSON body of up to `total` bytes, 1 MiB at a time, until the bridge answers. */
function streamUntilRefused(total: number): Promise<{ status: number; body: string; sent: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(bridge.url).port), '127.0.0.1');
    const chunk = Buffer.alloc(MiB, 'a'.charCodeAt(0));
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    let sent = 0;
    let answered = false;
    let answer = '';
    socket.on('data', (data: Buffer) => {
      answer += data.toString('utf8');
      if (!answered && parse(answer).status) {
        answered = true;
        setTimeout(() => socket.destroy(), 100);
      }
    });
    socket.on('close', () => resolve({ ...parse(answer), sent }));
    socket.on('error', (error: NodeJS.ErrnoException) => (answered || error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.write(`POST /eve/v1/session HTTP/1.1\r\nhost: ${new URL(bridge.url).host}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`);
    socket.write('c\r\n{"message":"\r\n'); // the 12 bytes of `{"message":"`, as a chunk
    const pump = () => {
      while (!answered && !socket.destroyed && sent < total) {
        sent += chunk.length;
        if (!socket.write(frame)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
}
