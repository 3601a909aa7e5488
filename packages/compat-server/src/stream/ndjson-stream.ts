import type { ServerResponse } from 'node:http';
import { HEADERS, HEARTBEAT_LINE, isTerminal, LEASE_ENDED_LINE, NDJSON_CONTENT_TYPE, STREAM_VERSION } from '@eve-flue/eve-protocol';
import { followJournalPages } from '../journal/follow.ts';
import type { Journal, JournalLine } from '../journal/journal.ts';
import type { StreamPlan } from './plan.ts';

export interface StreamTimings {
  /** Longest silence before a heartbeat line; the client drops a connection after 15 s. */
  heartbeatMs: number;
  /** How long a leased response (`streamControlVersion=1`) lasts before the client renews it. */
  leaseMs: number;
}

/**
 * Writes a session's events as NDJSON: an opening newline, the journal from `from`, then live
 * appends, with heartbeats. Ends after a terminal event, at a bounded read's tail, when the
 * lease runs out, or when the client goes away. Waits for `drain`, so a slow reader costs no memory.
 */
export async function writeNdjsonStream(journal: Journal, response: ServerResponse, plan: StreamPlan, timings: StreamTimings): Promise<void> {
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
  const lease = plan.leased
    ? setTimeout(() => {
        if (!response.writableEnded) response.end(LEASE_ENDED_LINE);
        stop.abort();
      }, timings.leaseMs)
    : undefined;
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
      if (!write(joinLines(page, end === -1 ? page.length : end + 1))) await drained(response, stop.signal);
      if (end !== -1) break;
    }
  } finally {
    clearInterval(heartbeat);
    clearTimeout(lease);
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
