import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import type { ErrorCode } from '@eve-flue/eve-protocol';
import type { Logger } from '../logger.ts';
import { SessionTakenOverError, StoreUnavailableError } from '../journal/errors.ts';
import { RequestError } from '../session/errors.ts';
import { sendRefusal } from './refusal.ts';

const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** The 4xx an http-errors error (express's router) carries, if it is one. */
function callerErrorStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500 ? status : undefined;
}

export function describeZodError(error: ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The request is invalid.';
  const path = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return `${path}${issue.message}`;
}

/** A failure as a caller is told it, on either transport; `ERRORS[code]` gives its status and close code. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

export const STORE_UNAVAILABLE: Refusal = { code: 'service_unavailable', message: 'The session store is unavailable; try again shortly.' };
/** A 4xx from express (a route parameter that is not percent-encoding): the caller's mistake. */
const MALFORMED = 'The request is malformed.';

/** What a caller is told of a failure; undefined for a bug in the bridge (an internal error, logged). */
export function refusalOf(error: unknown): Refusal | undefined {
  if (error instanceof RequestError) return { code: error.code, message: error.message };
  if (error instanceof StoreUnavailableError || error instanceof SessionTakenOverError) return STORE_UNAVAILABLE;
  if (error instanceof ZodError) return { code: 'invalid_request', message: describeZodError(error) };
  const callerStatus = callerErrorStatus(error);
  return callerStatus === undefined ? undefined : { code: CODE_BY_STATUS[callerStatus] ?? 'invalid_request', message: MALFORMED };
}

/** Every failure becomes `{ok:false, error, code}`; only a bug in the bridge is a 500. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    const refusal = refusalOf(error);
    if (!refusal) logger.error({ err: error, method: request.method, path: request.path }, 'request failed');
    else if (refusal === STORE_UNAVAILABLE) logger.warn({ err: error, path: request.path }, 'session store unavailable');
    // Answered without a stack trace in the log.
    else if (refusal.message === MALFORMED) logger.debug({ code: refusal.code, method: request.method, path: request.path }, 'malformed request refused');
    if (response.headersSent) {
      response.end();
      return;
    }
    const { code, message } = refusal ?? { code: 'internal_error', message: 'The bridge failed to handle this request.' };
    const details = error instanceof RequestError ? error.details : undefined;
    sendRefusal(response, code, message, details ? { details } : {});
  };
}

export const notFound: RequestHandler = (_request, response) => {
  sendRefusal(response, 'not_found', 'No such route.');
};
