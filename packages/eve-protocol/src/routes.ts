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
} as const;
