import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Duplex } from 'node:stream';
import type { CorsOptions } from 'cors';
import { WebSocketServer } from 'ws';
import { BEARER_PROTOCOL_PREFIX, EVE_BASE_PATH, ROUTES, WEBSOCKET_PROTOCOL } from '@eve-flue/eve-protocol';
import { identified, refusalHeaders } from '../auth/middleware.ts';
import type { SessionOwnership } from '../auth/ownership.ts';
import type { Principal, RouteAuthContext, RouteAuthPolicy } from '../auth/route-auth.ts';
import { authenticate } from '../auth/walk.ts';
import { refusalOf, STORE_UNAVAILABLE } from '../http/errors.ts';
import { refuse } from '../http/raw-response.ts';
import { MISDIRECTED, type Site } from '../http/site.ts';
import type { Journal } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import type { ServerObserver } from '../observer.ts';
import type { StreamTimings } from './ndjson-stream.ts';
import { resolveStreamPlan, type StreamAccess, type StreamPlan } from './plan.ts';
import { OpenStreams } from './open-streams.ts';
import { StreamWebSocket, WebSocketStream, type WebSocketStreamContext, type WebSocketStreamLimits } from './websocket-stream.ts';

export interface WebSocketStreamsOptions {
  sessions: StreamAccess;
  journal: Journal;
  /** Route auth; undefined admits anonymous callers (development only). */
  auth: RouteAuthPolicy | undefined;
  authContext: RouteAuthContext;
  /** Set when sessions belong to their creator. */
  ownership?: SessionOwnership;
  logger: Logger;
  timings: StreamTimings & WebSocketStreamLimits;
  /** The server's CORS setting: which foreign browser origins may open a stream. */
  cors?: boolean | CorsOptions | undefined;
  observer?: ServerObserver;
  /** The server's own names and origin; absent, `Origin` is compared with `Host`. */
  site?: Site;
}

export interface WebSocketStreams {
  /** The http server's `'upgrade'` listener. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every open stream with 1001 (terminating peers that do not answer within 1 s) and refuses new ones. */
  close(): Promise<void>;
}

/**
 * For the http server's `shouldUpgradeCallback` (Node ≥ 24.9): only WebSocket upgrades reach
 * `handleUpgrade`; others (e.g. curl's `Upgrade: h2c`) stay ordinary requests for the app, instead
 * of a 404 because an `'upgrade'` listener exists.
 */
export function isWebSocketUpgrade(request: IncomingMessage): boolean {
  return request.headers.upgrade?.toLowerCase() === 'websocket';
}

const STREAM_PATH = new RegExp(`^${EVE_BASE_PATH}${ROUTES.webSocket.replace(':sessionId', '([^/]+)')}/?$`);
const SHUTDOWN_GRACE_MS = 1_000;

/**
 * `GET /eve/v1/session/:sessionId/ws`: the session stream over a WebSocket. Same auth, query and
 * cursor semantics as the NDJSON stream; every refusal is a plain HTTP response before the
 * upgrade. Each text frame is one journal line without its newline.
 */
export function webSocketStreams({ sessions, journal, auth, authContext, ownership, logger, timings, cors, observer = {}, site }: WebSocketStreamsOptions): WebSocketStreams {
  const wss = new WebSocketServer({
    noServer: true,
    // The open streams are the clients: `ws` would keep a set of its own, and a 'close' listener on every socket for it.
    clientTracking: false,
    WebSocket: StreamWebSocket,
    maxPayload: 64 * 1024,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has(WEBSOCKET_PROTOCOL) ? WEBSOCKET_PROTOCOL : false),
  });
  let closing = false;
  const context: WebSocketStreamContext = {
    journal,
    timings,
    observer,
    logger,
    open: new OpenStreams(timings.heartbeatMs),
    onError: (error) => logger.debug({ err: error }, 'websocket error'),
  };

  /** Upgrades the request, or answers it with an error: then resolves with that status. */
  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<number | undefined> {
    if (site && !site.hostAllowed(request)) return refuse(socket, MISDIRECTED.code, MISDIRECTED.message);
    const url = new URL(request.url ?? '/', 'http://bridge.invalid');
    const match = STREAM_PATH.exec(url.pathname);
    if (request.method !== 'GET' || !match) return refuse(socket, 'not_found', 'No such route.');
    // Kept while the stream is open: a copy, because V8 keeps a substring this long as a slice
    // that holds the whole string it was cut from (here the URL's href) alive.
    const path = Buffer.from(url.pathname).toString();
    if (closing) return refuse(socket, 'service_unavailable', 'The bridge is shutting down.');
    let sessionId: string;
    try {
      sessionId = decodeURIComponent(match[1]!);
    } catch {
      return refuse(socket, 'invalid_request', 'The session id is not valid.');
    }
    const query = takeCredentials(request, url);
    if (!(await originAllowed(request, cors, site))) {
      logger.warn({ path, origin: request.headers.origin }, 'websocket from a foreign origin refused');
      return refuse(socket, 'forbidden', 'This origin may not open session streams.');
    }
    let principal: Principal | undefined;
    if (auth) {
      const admission = await authenticate(auth, request, authContext);
      if (!admission.ok) return refuse(socket, admission.refusal.code, admission.refusal.message, refusalHeaders(admission.refusal));
      principal = identified(admission.principal);
    }
    if (request.headers['sec-websocket-protocol'] !== undefined && !offeredProtocols(request).includes(WEBSOCKET_PROTOCOL)) {
      return refuse(socket, 'invalid_request', `Offer the ${WEBSOCKET_PROTOCOL} subprotocol.`);
    }
    const handshakeProblem = badHandshake(request);
    if (handshakeProblem) return refuse(socket, 'invalid_request', handshakeProblem);
    let plan: StreamPlan;
    try {
      await ownership?.check(sessionId, principal);
      plan = await resolveStreamPlan(sessions, journal, sessionId, query);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      if (refusal === STORE_UNAVAILABLE) logger.warn({ err: error, path }, 'session store unavailable');
      return refuse(socket, refusal.code, refusal.message);
    }
    if (socket.destroyed) return;
    if (closing) return refuse(socket, 'service_unavailable', 'The bridge is shutting down.');
    wss.handleUpgrade(request, socket, head, (ws) => {
      // `ws` handles the socket's errors from here on: the guard would only be a second listener on every open stream.
      socket.off('error', ignore);
      new WebSocketStream(context, ws, socket, plan, path);
    });
    return undefined;
  }

  return {
    handleUpgrade(request, socket, head) {
      // Until the upgrade completes: a peer that resets the connection meanwhile is no error of ours.
      socket.on('error', ignore);
      upgrade(request, socket, head)
        .catch((error: unknown) => {
          logger.error({ err: error, path: pathOf(request) }, 'websocket upgrade failed');
          return refuse(socket, 'internal_error', 'The bridge failed to handle this request.');
        })
        .then((status) => status !== undefined && observer.streamRefused?.({ transport: 'websocket', status, request }));
    },
    async close() {
      closing = true;
      await Promise.all(context.open.all().map((stream) => stream.goAway(SHUTDOWN_GRACE_MS)));
      wss.close();
    },
  };
}

const ignore = () => undefined;

function pathOf(request: IncomingMessage): string {
  return (request.url ?? '/').split('?')[0]!;
}

function offeredProtocols(request: IncomingMessage): string[] {
  return (request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * A browser cannot set headers on a WebSocket: it sends its bearer token as a `bearer.<token>`
 * subprotocol or an `access_token` query parameter. Moves it into `authorization` (unless that is
 * already set) for route auth, and removes it from the protocol header and the URL, so that
 * nothing downstream logs or echoes it. Returns the rest of the query.
 */
function takeCredentials(request: IncomingMessage, url: URL): Record<string, unknown> {
  const query: Record<string, unknown> = { ...parseQuery(url.search.slice(1)) };
  const fromQuery = query.access_token;
  delete query.access_token;
  if (url.searchParams.has('access_token')) {
    url.searchParams.delete('access_token');
    request.url = url.pathname + url.search;
  }
  let token = typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : undefined;
  if (request.headers['sec-websocket-protocol'] !== undefined) {
    const offered = offeredProtocols(request);
    const bearer = offered.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
    if (bearer !== undefined) {
      token = bearer.slice(BEARER_PROTOCOL_PREFIX.length);
      const rest = offered.filter((p) => !p.startsWith(BEARER_PROTOCOL_PREFIX));
      request.headers['sec-websocket-protocol'] = rest.join(', ');
    }
  }
  if (token !== undefined && request.headers.authorization === undefined) request.headers.authorization = `Bearer ${token}`;
  return query;
}

const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;
const PROTOCOL_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * What `ws` would answer with an HTML 400, checked first so the refusal is JSON in Eve's shape:
 * the key, the version, and the subprotocol list (RFC 6455 §4.2.1).
 */
function badHandshake(request: IncomingMessage): string | undefined {
  const key = request.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !WEBSOCKET_KEY.test(key)) return 'Sec-WebSocket-Key is missing or malformed.';
  const version = request.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') return 'Sec-WebSocket-Version must be 13.';
  if (request.headers['sec-websocket-protocol'] !== undefined) {
    const offered = request.headers['sec-websocket-protocol'].split(',').map((p) => p.trim());
    if (offered.some((p) => !PROTOCOL_TOKEN.test(p)) || new Set(offered).size !== offered.length) return 'Sec-WebSocket-Protocol is malformed.';
  }
  return undefined;
}

/**
 * CORS does not apply to WebSockets, so the browser's `Origin` is checked here the way the CORS
 * setting would: no `Origin` (not a browser) or the server's own origin passes (the configured
 * public origin; `Host` only for an app without one); a foreign one passes only when CORS allows it.
 */
async function originAllowed(request: IncomingMessage, cors: boolean | CorsOptions | undefined, site: Site | undefined): Promise<boolean> {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  if (site) {
    if (site.isOwnOrigin(origin)) return true;
  } else {
    try {
      if (new URL(origin).host === request.headers.host) return true;
    } catch {
      // `null` or malformed: not the same origin.
    }
  }
  if (!cors) return false;
  if (cors === true) return true;
  const allowed = cors.origin;
  if (typeof allowed === 'function') {
    return new Promise((resolve) => {
      allowed(origin, (error, result) => resolve(!error && result !== undefined && staticOriginAllows(result, origin)));
    });
  }
  return allowed === undefined || staticOriginAllows(allowed, origin);
}

type StaticOrigin = boolean | string | RegExp | Array<boolean | string | RegExp>;

function staticOriginAllows(allowed: StaticOrigin, origin: string): boolean {
  if (Array.isArray(allowed)) return allowed.some((entry) => staticOriginAllows(entry, origin));
  if (typeof allowed === 'boolean') return allowed;
  if (typeof allowed === 'string') return allowed === '*' || allowed === origin;
  return allowed.test(origin);
}
