import type { ServerResponse } from 'node:http';
import { ERRORS, errorBody, type ErrorCode } from '@eve-flue/eve-protocol';

/** A refusal as it goes on the wire: the status the `ERRORS` table gives its code, headers, a JSON body. */
export interface RefusalResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

/** Headers a refusal may add; a list for a header sent several times (`www-authenticate`). */
export type RefusalHeaders = Record<string, string | readonly string[]>;

/**
 * The one place a refusal's status, headers and body are made, whichever transport sends them.
 * The body is Eve's error body; a protocol of its own (the MCP channel's JSON-RPC) passes its own.
 */
export function refusalResponse(code: ErrorCode, message: string, headers: RefusalHeaders = {}, body: unknown = errorBody(code, message)): RefusalResponse {
  const text = JSON.stringify(body);
  return {
    status: ERRORS[code].status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      'cache-control': 'no-store',
      ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, typeof value === 'string' ? value : [...value]])),
    },
    body: text,
  };
}

/**
 * Refuses a request on any Node response, an express one or a bare `ServerResponse` (before the
 * app is built, the metrics port): the status from the `ERRORS` table, Eve's error body (with the
 * refusal's `details`, when it has some, beside it).
 */
export function sendRefusal(
  response: ServerResponse,
  code: ErrorCode,
  message: string,
  { headers = {}, details, body }: { headers?: RefusalHeaders; details?: Record<string, unknown>; body?: unknown } = {},
): void {
  const refusal = refusalResponse(code, message, headers, body ?? { ...details, ...errorBody(code, message) });
  response.writeHead(refusal.status, refusal.headers).end(refusal.body);
}
