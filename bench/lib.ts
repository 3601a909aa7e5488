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
