import type { Duplex } from 'node:stream';
import { request, type IncomingMessage } from 'node:http';

/** Opens `count` streaming GETs and resolves once every response has started. */
export async function openReaders(url: string, count: number): Promise<IncomingMessage[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<IncomingMessage>((resolve, reject) => {
          const req = request(url, { agent: false }, resolve);
          req.on('error', reject);
          req.end();
        }),
    ),
  );
}

/** Resolves when a reader has seen `lines` NDJSON lines after the stream's opening newline. */
export function countLines(response: IncomingMessage, lines: number): Promise<void> {
  return new Promise((resolve) => {
    let newlines = 0;
    response.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) newlines += 1;
      if (newlines > lines) {
        resolve();
        response.destroy();
      }
    });
  });
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The middle value (the upper one of an even count). */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Opens `count` WebSocket readers and resolves once all are open. */
export async function openWebSocketReaders(url: string, count: number): Promise<import('ws').WebSocket[]> {
  const { WebSocket } = await import('ws');
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import('ws').WebSocket>((resolve, reject) => {
          const socket = new WebSocket(url, ['eve.v1']);
          socket.once('open', () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
}

/**
 * Opens `count` WebSocket readers without a client library: the handshake by hand, then the raw
 * socket, for readers that only count frames (as NDJSON readers only count newlines), so that a
 * client library's per-message work does not stand in for the server's.
 */
export async function openRawWebSocketReaders(url: string, count: number): Promise<{ socket: Duplex; head: Buffer }[]> {
  const { randomBytes } = await import('node:crypto');
  const httpUrl = url.replace(/^ws/, 'http');
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<{ socket: Duplex; head: Buffer }>((resolve, reject) => {
          const req = request(httpUrl, {
            agent: false,
            headers: {
              connection: 'Upgrade',
              upgrade: 'websocket',
              'sec-websocket-key': randomBytes(16).toString('base64'),
              'sec-websocket-version': '13',
              'sec-websocket-protocol': 'eve.v1',
            },
          });
          req.on('upgrade', (_response, socket, head) => resolve({ socket, head }));
          req.on('response', (response) => reject(new Error(`no upgrade: ${response.statusCode}`)));
          req.on('error', reject);
          req.end();
        }),
    ),
  );
}

/** Resolves when a raw WebSocket reader has received `frames` whole text frames (server frames are unmasked). */
export function countRawFrames({ socket, head }: { socket: Duplex; head: Buffer }, frames: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    let payloadLeft = 0;
    let inText = false;
    let partial: Buffer | undefined;
    const onData = (data: Buffer) => {
      const chunk = partial ? Buffer.concat([partial, data]) : data;
      partial = undefined;
      let at = 0;
      while (at < chunk.length) {
        if (payloadLeft > 0) {
          const taken = Math.min(payloadLeft, chunk.length - at);
          payloadLeft -= taken;
          at += taken;
          if (payloadLeft === 0 && inText) seen += 1;
        } else {
          const short = chunk[at + 1]! & 0x7f;
          const headerBytes = short === 126 ? 4 : short === 127 ? 10 : 2;
          if (chunk.length - at < headerBytes) {
            partial = chunk.subarray(at);
            break;
          }
          inText = (chunk[at]! & 0x0f) === 1;
          payloadLeft = short === 126 ? chunk.readUInt16BE(at + 2) : short === 127 ? Number(chunk.readBigUInt64BE(at + 2)) : short;
          at += headerBytes;
          if (payloadLeft === 0 && inText) seen += 1;
        }
        if (seen >= frames) {
          resolve();
          socket.destroy();
          return;
        }
      }
    };
    socket.on('data', onData);
    if (head.length > 0) onData(head);
  });
}
