import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { principalOf, type Logger, type ServerObserver, type StreamSummary } from '@eve-flue/compat-server';
import { BRIDGE_ROUTES, EVE_BASE_PATH, ROUTES } from '@eve-flue/eve-protocol';
import { READY_PATH } from './readiness.ts';

/**
 * The routes the bridge serves, as patterns: a log line names the pattern, never the raw path or
 * query, which can carry a session's id in the wrong place, an OAuth code or state, or a token.
 */
const PATTERNS = [
  ...[...Object.values(ROUTES), ...Object.values(BRIDGE_ROUTES)].map((route) => `${EVE_BASE_PATH}${route}`),
  READY_PATH,
  '/',
].map((pattern) => ({ pattern, regex: new RegExp(`^${pattern.replace(/:[a-zA-Z]+/g, '([^/]+)')}/?$`) }));

/** The pattern a path matches, and the session it names. */
export function routeOf(path: string): { route: string; sessionId?: string } {
  for (const { pattern, regex } of PATTERNS) {
    const match = regex.exec(path);
    if (!match) continue;
    const sessionId = pattern.includes(':sessionId') ? match[1] : undefined;
    return { route: pattern, ...(sessionId ? { sessionId } : {}) };
  }
  return { route: '(unmatched)' };
}

/** Body bytes of a chunk given to `write` or `end`. */
function bytesOf(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}

interface Line {
  method: string;
  route: string;
  status: number;
  durationMs: number;
  principal: string | null;
  sessionId: string | null;
  bytes: number;
  transport?: StreamSummary['transport'];
  events?: number;
}

/**
 * One JSON line per request (`msg: "request"`): method, route pattern, status, duration,
 * principal id, session id and body bytes written. A session stream logs when it ends, with its
 * duration and the number of events it carried. Nothing from headers, cookies or the query is
 * logged, so no token, code or credential can reach the log.
 */
export function accessLog(logger: Logger): { middleware: RequestHandler; observer: ServerObserver } {
  /** Streams whose response closed before the stream reported its summary, and the reverse. */
  const pendingLines = new WeakMap<IncomingMessage, Line>();
  const summaries = new WeakMap<IncomingMessage, StreamSummary>();
  const write = (line: Line) => logger.info({ access: line }, 'request');

  const middleware: RequestHandler = (request, response, next) => {
    const started = process.hrtime.bigint();
    // Read now: routers rewrite the request's url while they handle it.
    const { route, sessionId } = routeOf(request.path);
    let bytes = 0;
    const { write: rawWrite, end: rawEnd } = response;
    response.write = function (this: typeof response, chunk: unknown, encoding?: unknown, callback?: unknown) {
      bytes += bytesOf(chunk);
      return (rawWrite as (...args: unknown[]) => boolean).call(this, chunk, encoding, callback);
    } as typeof response.write;
    response.end = function (this: typeof response, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'function') bytes += bytesOf(chunk);
      return (rawEnd as (...args: unknown[]) => typeof response).call(this, chunk, ...rest);
    } as typeof response.end;
    // A response closes once: `on`, since `once` would add a wrapper and its state to every open stream.
    response.on('close', () => {
      const line: Line = {
        method: request.method,
        route,
        status: response.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        principal: principalOf(request as Request)?.id ?? null,
        sessionId: sessionId ?? null,
        bytes,
      };
      const isStream = route === `${EVE_BASE_PATH}${ROUTES.stream}` && response.statusCode === 200;
      const summary = summaries.get(request);
      if (!isStream) return write(line);
      if (summary) return write({ ...line, transport: summary.transport, events: summary.events });
      pendingLines.set(request, line);
    });
    next();
  };

  /** WebSocket streams bypass express: their line comes from the stream's own report. */
  const webSocketLine = (method: string, path: string, status: number, durationMs: number): Line => {
    const { route, sessionId } = routeOf(path);
    return { method, route, status, durationMs, principal: null, sessionId: sessionId ?? null, bytes: 0, transport: 'websocket' };
  };

  const observer: ServerObserver = {
    streamClosed(summary) {
      if (summary.transport === 'websocket') return write({ ...webSocketLine('GET', summary.path, 101, summary.durationMs), events: summary.events });
      const line = pendingLines.get(summary.request);
      if (!line) return void summaries.set(summary.request, summary);
      pendingLines.delete(summary.request);
      write({ ...line, transport: summary.transport, events: summary.events });
    },
    streamRefused({ request, status }) {
      write(webSocketLine(request.method ?? 'GET', new URL(request.url ?? '/', 'http://bridge.invalid').pathname, status, 0));
    },
  };
  return { middleware, observer };
}
