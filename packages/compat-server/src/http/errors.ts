import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { ERRORS, errorBody, type ErrorCode } from '@eve-flue/eve-protocol';
import type { Logger } from '../logger.ts';
import { SessionTakenOverError, StoreUnavailableError } from '../journal/errors.ts';
import { RequestError } from '../session/errors.ts';

/** body-parser's error `type`s, mapped to what the caller did wrong. */
const BODY_ERRORS: Record<string, [ErrorCode, string]> = {
  'entity.parse.failed': ['invalid_json', 'The request body is not valid JSON.'],
  'entity.too.large': ['payload_too_large', 'The request body is too large.'],
  'encoding.unsupported': ['unsupported_media_type', 'The request body encoding is not supported.'],
  'charset.unsupported': ['unsupported_media_type', 'The request body charset is not supported.'],
  'request.aborted': ['invalid_request', 'The request body was not sent completely.'],
  'request.size.invalid': ['invalid_request', 'The request body length does not match its content-length.'],
};

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

/** What a caller is told of a failure; undefined for a bug in the bridge (an internal error, logged). */
export function refusalOf(error: unknown): Refusal | undefined {
  if (error instanceof RequestError) return { code: error.code, message: error.message };
  if (error instanceof StoreUnavailableError || error instanceof SessionTakenOverError) return STORE_UNAVAILABLE;
  if (error instanceof ZodError) return { code: 'invalid_request', message: describeZodError(error) };
  const known = BODY_ERRORS[(error as { type?: string })?.type ?? ''];
  return known && { code: known[0], message: known[1] };
}

/** Every failure becomes `{ok:false, error, code}`; only a bug in the bridge is a 500. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    const refusal = refusalOf(error);
    if (!refusal) logger.error({ err: error, method: request.method, path: request.path }, 'request failed');
    else if (refusal === STORE_UNAVAILABLE) logger.warn({ err: error, path: request.path }, 'session store unavailable');
    if (response.headersSent) {
      response.end();
      return;
    }
    const { code, message } = refusal ?? { code: 'internal_error', message: 'The bridge failed to handle this request.' };
    response.status(ERRORS[code].status).json(errorBody(code, message));
  };
}

export const notFound: RequestHandler = (_request, response) => {
  response.status(ERRORS.not_found.status).json(errorBody('not_found', 'No such route.'));
};
