import type { ServerResponse } from 'node:http';
import { HEADERS, HEARTBEAT_LINE, isTerminal, LEASE_ENDED_LINE, NDJSON_CONTENT_TYPE, STREAM_VERSION } from '@eve-flue/eve-protocol';
import { followJournalPages } from '../journal/follow.ts';
import type { Journal, JournalLine } from '../journal/journal.ts';
import type { ServerObserver } from '../observer.ts';
import type { StreamPlan } from './plan.ts';

export interface StreamTimings {
  /** Longest silence before a heartbeat line; the client drops a connection after 15 s. */
  heartbeatMs: number;
  /** How long a leased response (`streamControlVersion=1`) lasts before the client renews it. */
  leaseMs: number;
}

/** What ends every open stream resumably (the server drains), and who hears about streams. */
export interface StreamLifecycle {
  shutdown: AbortSignal;
  observer: ServerObserver;
}

/**
 * Writes a session's events as NDJSON: an opening newline, the journal from `from`, then live
 * appends, with heartbeats. Ends after a terminal event, at a bounded read's tail, when the
 * lease runs out, when the server drains, or when the client goes away. Ending for a lease or a
 * drain is resumable: the lease-ended line (for clients that understand it) makes the client
 * reconnect at its cursor at once; others reconnect after their back-off. Waits for `drain`, so
 * a slow reader costs no memory.
 */
export async function writeNdjsonStream(
  journal: Journal,
  response: ServerResponse,
  plan: StreamPlan,
  timings: StreamTimings,
  { shutdown, observer }: StreamLifecycle,
): Promise<void> {
  response.writeHead(200, {
    'content-type': NDJSON_CONTENT_TYPE,
    'cache-control': 'no-store, no-transform',
    'x-accel-buffering': 'no',
    [HEADERS.streamVersion]: STREAM_VERSION,
    [HEADERS.streamFormat]: 'ndjson',
    [HEADERS.sessionId]: plan.sessionId,
    ...(plan.tail !== undefined ? { [HEADERS.streamTailIndex]: String(plan.tail) } : {}),
  });
  const stop = new AbortController();
  const onClose = () => stop.abort();
  response.on('close', onClose);
  let lastWrite = Date.now();
  const write = (chunk: string): boolean => {
    lastWrite = Date.now();
    return response.write(chunk);
  };
  const heartbeat = setInterval(() => {
    if (Date.now() - lastWrite >= timings.heartbeatMs) write(HEARTBEAT_LINE);
  }, Math.max(50, Math.floor(timings.heartbeatMs / 2)));
  const endResumably = () => {
    if (!response.writableEnded) response.end(plan.leased ? LEASE_ENDED_LINE : undefined);
    stop.abort();
  };
  const lease = plan.leased ? setTimeout(endResumably, timings.leaseMs) : undefined;
  if (shutdown.aborted) endResumably();
  shutdown.addEventListener('abort', endResumably);
  const opened = Date.now();
  let events = 0;
  observer.streamOpened?.('ndjson');
  try {
    write(HEARTBEAT_LINE);
    const pages = followJournalPages(journal, plan.sessionId, {
      from: plan.from,
      signal: stop.signal,
      ...(plan.until !== undefined ? { until: plan.until } : {}),
    });
    // One write per page: one chunk of joined lines (node:http already corks each response's
    // socket until the next tick, so the pages of one tick leave in one writev).
    for await (const page of pages) {
      const end = page.findIndex((line) => isTerminal(line.type));
      events += end === -1 ? page.length : end + 1;
      if (!write(joinLines(page, end === -1 ? page.length : end + 1))) await drained(response, stop.signal);
      if (end !== -1) break;
    }
  } finally {
    clearInterval(heartbeat);
    clearTimeout(lease);
    shutdown.removeEventListener('abort', endResumably);
    observer.streamClosed?.({ transport: 'ndjson', sessionId: plan.sessionId, events, durationMs: Date.now() - opened, request: response.req });
    response.off('close', onClose);
    stop.abort();
    if (!response.writableEnded) response.end();
  }
}

function joinLines(page: readonly JournalLine[], count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += page[i]!.line;
  return text;
}

function drained(response: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    response.on('drain', done);
    signal.addEventListener('abort', done);
  });
}
