import type { ErrorCode } from '@eve-flue/eve-protocol';

/**
 * A refusal, answered as `{ok:false, error, code}`. It names only the code: each transport reads
 * its HTTP status or WebSocket close code from eve-protocol's `ERRORS`.
 */
export class RequestError extends Error {
  override name = 'RequestError';
  readonly code: ErrorCode;
  /** More fields of the error body, beside `ok`, `error` and `code` (e.g. the protocol version served). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details?: Readonly<Record<string, unknown>>) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export const sessionNotActive = () => new RequestError('session_not_active', 'The session is no longer active.');
