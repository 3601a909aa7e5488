import type { ErrorCode } from '@eve-flue/eve-protocol';

/** A refusal the HTTP layer turns into `{ok:false, error, code}` with `status`. */
export class RequestError extends Error {
  readonly status: number;
  readonly code: ErrorCode;

  constructor(status: number, code: ErrorCode, message: string) {
    super(message);
    this.name = 'RequestError';
    this.status = status;
    this.code = code;
  }
}

export const sessionNotActive = () => new RequestError(409, 'session_not_active', 'The session is no longer active.');
