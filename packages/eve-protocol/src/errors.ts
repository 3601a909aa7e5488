/** Error bodies in the shape the real Eve server uses: `{ ok: false, error, code }`. */

/** WebSocket close codes (RFC 6455 §7.4, and this bridge's own 4xxx). */
export const CLOSE_CODES = {
  normal: 1000,
  goingAway: 1001,
  policyViolation: 1008,
  internalError: 1011,
  tryAgainLater: 1013,
  /** A reader that fell too far behind; the reason says where to resume. */
  slowReader: 4008,
} as const;

/**
 * Every error code, with the HTTP status and the WebSocket close code it is answered with: the
 * one table both transports read. Domain errors carry only the code.
 */
export const ERRORS = {
  invalid_json: { status: 400, closeCode: CLOSE_CODES.policyViolation },
  invalid_request: { status: 400, closeCode: CLOSE_CODES.policyViolation },
  operation_id_requires_auth: { status: 400, closeCode: CLOSE_CODES.policyViolation },
  unauthorized: { status: 401, closeCode: CLOSE_CODES.policyViolation },
  forbidden: { status: 403, closeCode: CLOSE_CODES.policyViolation },
  not_found: { status: 404, closeCode: CLOSE_CODES.policyViolation },
  session_not_found: { status: 404, closeCode: CLOSE_CODES.policyViolation },
  session_not_active: { status: 409, closeCode: CLOSE_CODES.policyViolation },
  /** A sign-in link opened in a browser other than the one that owns the flow. */
  sign_in_taken: { status: 409, closeCode: CLOSE_CODES.policyViolation },
  unknown_input_request: { status: 409, closeCode: CLOSE_CODES.policyViolation },
  /** Eve's own spelling: a remote-agent parent on a protocol version this bridge does not serve. */
  REMOTE_AGENT_PROTOCOL_MISMATCH: { status: 409, closeCode: CLOSE_CODES.policyViolation },
  session_expired: { status: 410, closeCode: CLOSE_CODES.policyViolation },
  misdirected_request: { status: 421, closeCode: CLOSE_CODES.policyViolation },
  method_not_allowed: { status: 405, closeCode: CLOSE_CODES.policyViolation },
  payload_too_large: { status: 413, closeCode: CLOSE_CODES.policyViolation },
  unsupported_media_type: { status: 415, closeCode: CLOSE_CODES.policyViolation },
  headers_too_large: { status: 431, closeCode: CLOSE_CODES.policyViolation },
  internal_error: { status: 500, closeCode: CLOSE_CODES.internalError },
  service_unavailable: { status: 503, closeCode: CLOSE_CODES.tryAgainLater },
} as const satisfies Record<string, { status: number; closeCode: number }>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERRORS, value);
}

export interface ErrorBody {
  ok: false;
  error: string;
  code: ErrorCode;
}

export function errorBody(code: ErrorCode, error: string): ErrorBody {
  return { ok: false, error, code };
}
