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

/** Resolves when a WebSocket reader has received `frames` messages. */
export function countFrames(socket: import('ws').WebSocket, frames: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    socket.on('message', () => {
      if (++seen >= frames) {
        resolve();
        socket.terminate();
      }
    });
  });
}
