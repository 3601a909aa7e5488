import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { listen, type Listening } from './listen.ts';

export interface RecordingProxy extends Listening {
  /** The headers of every request that reached the upstream server through the proxy. */
  requests: { method: string; headers: IncomingHttpHeaders; body: string }[];
}

/** A transparent HTTP proxy to `upstream` that records what each request carried. */
export async function startRecordingProxy(upstream: string): Promise<RecordingProxy> {
  const requests: RecordingProxy['requests'] = [];
  const listening = await listen(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    requests.push({ method: request.method ?? 'GET', headers: request.headers, body: body.toString('utf8') });
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string' && name !== 'host') headers.set(name, value);
    const answer = await fetch(new URL(request.url ?? '/', upstream), {
      method: request.method ?? 'GET',
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => name !== 'content-encoding' && name !== 'content-length')));
    // Streamed, so that a standing event stream stays one.
    if (!answer.body) return void response.end();
    Readable.fromWeb(answer.body as import('node:stream/web').ReadableStream).on('error', () => response.destroy()).pipe(response);
  });
  return { ...listening, requests };
}
