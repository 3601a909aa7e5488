/** Route paths and headers of Eve's HTTP session API (`eve/dist/src/protocol/routes.js`). */

export const EVE_BASE_PATH = '/eve/v1';

export const STREAM_VERSION = '26';

export const HEADERS = {
  sessionId: 'x-eve-session-id',
  streamVersion: 'x-eve-stream-version',
  streamFormat: 'x-eve-stream-format',
  streamTailIndex: 'x-eve-stream-tail-index',
} as const;

/** Headers a cross-origin browser client must be able to read. */
export const EXPOSED_HEADERS: readonly string[] = [HEADERS.sessionId, HEADERS.streamVersion, HEADERS.streamTailIndex];

export const ROUTES = {
  health: '/health',
  info: '/info',
  sessions: '/session',
  session: '/session/:sessionId',
  cancel: '/session/:sessionId/cancel',
  clear: '/session/:sessionId/clear',
  compact: '/session/:sessionId/compact',
  reset: '/session/:sessionId/reset',
  stream: '/session/:sessionId/stream',
  /** The session stream over a WebSocket (an upgrade, not an express route). */
  webSocket: '/session/:sessionId/ws',
} as const;

/** The bridge's own routes beside Eve's, under the same base path. */
export const BRIDGE_ROUTES = {
  connections: '/connections',
  connectionAuthorization: '/connections/:name/authorization',
  oauthStart: '/oauth/start/:attempt',
  oauthCallback: '/oauth/callback',
  oauthResult: '/oauth/result/:outcome',
} as const;

/** The subprotocol a WebSocket client offers and the server answers with. */
export const WEBSOCKET_PROTOCOL = 'eve.v1';
/** A client that cannot set headers offers `bearer.<token>` next to `eve.v1`; it is never echoed. */
export const BEARER_PROTOCOL_PREFIX = 'bearer.';
/** First WebSocket frame when the client asked for the tail (`follow=false` or `includeTailIndex=1`). */
export const TAIL_INDEX_CONTROL = 'stream.tail-index';

/** A route with its parameters filled in: `routePath(ROUTES.cancel, { sessionId })`. */
export function routePath(route: string, params: Record<string, string>): string {
  return route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}
