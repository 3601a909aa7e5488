import { Router, type Request, type RequestHandler } from 'express';
import { HEADERS, ROUTES, type AcceptedBody, type CancelBody, type ControlBody, type ResetBody } from '@eve-flue/eve-protocol';
import { principalOf } from '../auth/middleware.ts';
import { isJson } from '../http/json-body.ts';
import { checkTextBytes, type RequestLimits } from '../http/limits.ts';
import { toMessageInput, type UploadPolicy } from '../http/message.ts';
import { cancelBody, createBody, followUpBody, resetBody } from '../http/schemas.ts';
import type { Journal } from '../journal/journal.ts';
import { RequestError } from '../session/errors.ts';
import type { Sessions } from '../session/sessions.ts';
import { writeNdjsonStream, type StreamLifecycle, type StreamTimings } from '../stream/ndjson-stream.ts';
import { resolveStreamPlan } from '../stream/plan.ts';

export interface SessionRoutesOptions {
  sessions: Sessions;
  journal: Journal;
  uploads: UploadPolicy;
  limits: RequestLimits;
  stream: StreamTimings;
  lifecycle: StreamLifecycle;
}

/**
 * `POST` bodies: an absent or empty body is `{}`. Every POST must say `application/json`, bodyless
 * controls included (Eve's client always does): a page on another origin cannot send that without
 * a CORS preflight, so it cannot end or steer a session. The one exception is a create with no
 * body and no content type (the client's prewarm), which only opens an empty session.
 */
function jsonBody(request: Request, { bareAllowed = false } = {}): unknown {
  const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  const bare = !hasBody && request.headers['content-type'] === undefined;
  if (!(bare && bareAllowed) && !isJson(request.headers['content-type'])) {
    throw new RequestError(415, 'unsupported_media_type', 'Send the request as application/json.');
  }
  return request.body ?? {};
}

const sessionIdOf = (request: Request): string => String(request.params.sessionId);

export function sessionRoutes({ sessions, journal, uploads, limits, stream, lifecycle }: SessionRoutesOptions): Router {
  const router = Router();
  const accepted = (sessionId: string, deliveryId?: string): AcceptedBody => ({
    ok: true,
    sessionId,
    status: 'accepted',
    ...(deliveryId !== undefined ? { deliveryId } : {}),
  });

  router.post(ROUTES.sessions, (async (request, response) => {
    const body = createBody.parse(jsonBody(request, { bareAllowed: true }));
    const input = body.message === undefined ? undefined : toMessageInput(body.message, uploads, limits, body.clientContext);
    const sessionId = await sessions.create(principalOf(request), input, body.operationId);
    response.status(202).set(HEADERS.sessionId, sessionId).set('cache-control', 'no-store').json(accepted(sessionId));
  }) satisfies RequestHandler);

  router.post(ROUTES.session, (async (request, response) => {
    const sessionId = sessionIdOf(request);
    const body = followUpBody.parse(jsonBody(request));
    if (body.inputResponses) checkTextBytes(body.inputResponses.flatMap((r) => (r.text === undefined ? [] : [r.text])), limits);
    const deliveryId = body.inputResponses
      ? await sessions.respond(sessionId, body.inputResponses)
      : await sessions.send(
          sessionId,
          principalOf(request),
          toMessageInput(body.message!, uploads, limits, body.clientContext),
          body.turnPolicy ?? 'steer',
        );
    response.status(202).set(HEADERS.sessionId, sessionId).set('cache-control', 'no-store').json(accepted(sessionId, deliveryId));
  }) satisfies RequestHandler);

  router.post(ROUTES.cancel, (async (request, response) => {
    const sessionId = sessionIdOf(request);
    const { turnId } = cancelBody.parse(jsonBody(request));
    const status = await sessions.cancel(sessionId, turnId);
    const body: CancelBody = status === 'accepted' ? { ok: true, status, sessionId } : { ok: true, status };
    response.status(status === 'accepted' ? 202 : 200).json(body);
  }) satisfies RequestHandler);

  for (const [route, control] of [
    [ROUTES.clear, (id: string) => sessions.clear(id)],
    [ROUTES.compact, (id: string) => sessions.compact(id)],
  ] as const) {
    router.post(route, (async (request, response) => {
      const sessionId = sessionIdOf(request);
      jsonBody(request);
      const status = await control(sessionId);
      const body: ControlBody = status === 'accepted' ? { ok: true, status, sessionId } : { ok: true, status };
      response.status(status === 'accepted' ? 202 : 200).json(body);
    }) satisfies RequestHandler);
  }

  router.post(ROUTES.reset, (async (request, response) => {
    const sessionId = sessionIdOf(request);
    resetBody.parse(jsonBody(request));
    const status = await sessions.reset(sessionId);
    const body: ResetBody = status === 'reset' ? { ok: true, status, previousSessionId: sessionId } : { ok: true, status };
    response.status(200).json(body);
  }) satisfies RequestHandler);

  router.get(ROUTES.stream, (async (request, response) => {
    const plan = await resolveStreamPlan(sessions, journal, sessionIdOf(request), request.query);
    await writeNdjsonStream(journal, response, plan, stream, lifecycle);
  }) satisfies RequestHandler);

  return router;
}
