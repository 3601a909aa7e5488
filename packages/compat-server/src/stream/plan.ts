import type { Journal } from '../journal/journal.ts';
import { streamQuery } from '../http/schemas.ts';
import { RequestError } from '../session/errors.ts';

/** Where a stream starts and stops, whatever carries it (NDJSON or WebSocket). */
export interface StreamPlan {
  sessionId: string;
  from: number;
  /** Last index to send, for bounded reads; absent to follow live appends. */
  until?: number;
  /** Report the tail in `x-eve-stream-tail-index`. */
  tail?: number;
  leased: boolean;
}

/** What the stream routes need of the sessions: whether one can be read, and if not, why. */
export interface StreamAccess {
  streamAccess(sessionId: string): Promise<'ok' | 'not_found' | 'expired'>;
}

/**
 * The plan both stream routes follow for `GET …/stream` and `GET …/ws`: validates the query (a
 * `ZodError`, 400), checks the session can be read (`RequestError` 404 / 410), and resolves the
 * cursor: `startIndex` absolute or negative (`max(0, tail + 1 + n)`), bounded at the current
 * tail for `follow=false` or `includeTailIndex=1`.
 */
export async function resolveStreamPlan(
  sessions: StreamAccess,
  journal: Journal,
  sessionId: string,
  rawQuery: unknown,
): Promise<StreamPlan> {
  const query = streamQuery.parse(rawQuery);
  const access = await sessions.streamAccess(sessionId);
  if (access === 'not_found') throw new RequestError('session_not_found', 'Session not found.');
  if (access === 'expired') throw new RequestError('session_expired', 'The session ended and its stream is past retention.');
  const tail = await journal.tail(sessionId);
  const startIndex = query.startIndex ?? 0;
  const from = startIndex >= 0 ? startIndex : Math.max(0, tail + 1 + startIndex);
  const bounded = query.follow === false || query.includeTailIndex === true;
  return {
    sessionId,
    from,
    ...(bounded ? { until: tail, tail } : {}),
    leased: query.streamControlVersion === '1' && startIndex >= 0,
  };
}

