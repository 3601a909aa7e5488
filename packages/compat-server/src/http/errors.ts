import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { errorBody, type ErrorCode } from '@eve-flue/eve-protocol';
import type { Logger } from '../logger.ts';
import { StoreUnavailableError } from '../journal/errors.ts';
import { RequestError } from '../session/errors.ts';

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

/** Every failure becomes `{ok:false, error, code}`; only a bug in the bridge is a 500. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    let status: number;
    let body;
    if (error instanceof RequestError) {
      status = error.status;
      body = errorBody(error.code, error.message);
    } else if (error instanceof StoreUnavailableError) {
      status = 503;
      body = errorBody('service_unavailable', 'The session store is unavailable; try again shortly.');
      logger.warn({ err: error, path: request.path }, 'session store unavailable');
    } else if (error instanceof ZodError) {
      status = 400;
      body = errorBody('invalid_request', describeZodError(error));
    } else {
      const callerStatus = callerErrorStatus(error);
      if (callerStatus !== undefined) {
        // A 4xx from express (a route parameter that is not percent-encoding): the caller's
        // mistake, answered without a stack trace in the log.
        status = callerStatus;
        body = errorBody(CODE_BY_STATUS[callerStatus] ?? 'invalid_request', 'The request is malformed.');
        logger.debug({ status, method: request.method, path: request.path }, 'malformed request refused');
      } else {
        status = 500;
        body = errorBody('internal_error', 'The bridge failed to handle this request.');
        logger.error({ err: error, method: request.method, path: request.path }, 'request failed');
      }
    }
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(status).json(body);
  };
}

export const notFound: RequestHandler = (_request, response) => {
  response.status(404).json(errorBody('not_found', 'No such route.'));
};
