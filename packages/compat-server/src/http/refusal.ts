import type { ServerResponse } from 'node:http';
import { ERRORS, errorBody, type ErrorCode } from '@eve-flue/eve-protocol';

/** A refusal as it goes on the wire: the status the `ERRORS` table gives its code, headers, an Eve error body. */
export interface RefusalResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

/** Headers a refusal may add; a list for a header sent several times (`www-authenticate`). */
export type RefusalHeaders = Record<string, string | readonly string[]>;

/** The one place a refusal's status, headers and body are made, whichever transport sends them. */
export function refusalResponse(code: ErrorCode, message: string, headers: RefusalHeaders = {}): RefusalResponse {
  const body = JSON.stringify(errorBody(code, message));
  return {
    status: ERRORS[code].status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
      ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, typeof value === 'string' ? value : [...value]])),
    },
    body,
  };
}

/**
 * Refuses a request on any Node response, an express one or a bare `ServerResponse` (before the
 * app is built, the metrics port): the status from the `ERRORS` table, Eve's error body.
 */
export function sendRefusal(response: ServerResponse, code: ErrorCode, message: string, headers: RefusalHeaders = {}): void {
  const { status, headers: head, body } = refusalResponse(code, message, headers);
  response.writeHead(status, head).end(body);
}
