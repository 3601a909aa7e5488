/** Error bodies in the shape the real Eve server uses: `{ ok: false, error, code }`. */

export const ERROR_CODES = {
  invalidJson: 'invalid_json',
  invalidRequest: 'invalid_request',
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'not_found',
  sessionNotFound: 'session_not_found',
  sessionNotActive: 'session_not_active',
  sessionExpired: 'session_expired',
  unknownInputRequest: 'unknown_input_request',
  operationRequiresAuth: 'operation_id_requires_auth',
  misdirectedRequest: 'misdirected_request',
  serviceUnavailable: 'service_unavailable',
  internal: 'internal_error',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export interface ErrorBody {
  ok: false;
  error: string;
  code: ErrorCode;
}

export function errorBody(code: ErrorCode, error: string): ErrorBody {
  return { ok: false, error, code };
}
