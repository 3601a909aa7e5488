import { Router, type Request, type RequestHandler } from 'express';
import { HEADERS, ROUTES, type AcceptedBody, type CancelBody, type ControlBody, type ResetBody } from '@eve-flue/eve-protocol';
import type { CommandKind, CommandOf, CommandResult } from '@eve-flue/session-contract';
import { principalOf } from '../auth/middleware.ts';
import type { SessionOwnership } from '../auth/ownership.ts';
import { isJson } from '../http/json-body.ts';
import { checkTextBytes, type RequestLimits } from '../http/limits.ts';
import { toMessageInput, type UploadPolicy } from '../http/message.ts';
import { cancelBody, createBody, followUpBody, resetBody } from '../http/schemas.ts';
import type { Journal } from '../journal/journal.ts';
import { RequestError } from '../session/errors.ts';
import { newDeliveryId } from '../session/ids.ts';
import type { Sessions } from '../session/sessions.ts';
import type { NdjsonStreams } from '../stream/ndjson-stream.ts';
import { resolveStreamPlan } from '../stream/plan.ts';

export interface SessionRoutesOptions {
  sessions: Sessions;
  journal: Journal;
  uploads: UploadPolicy;
  limits: RequestLimits;
  streams: NdjsonStreams;
  /** Set when sessions belong to their creator: checked before every route of an existing session. */
  ownership?: SessionOwnership;
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
    throw new RequestError('unsupported_media_type', 'Send the request as application/json.');
  }
  return request.body ?? {};
}

const sessionIdOf = (request: Request): string => String(request.params.sessionId);

type Answer = { status: number; body: AcceptedBody | CancelBody | ControlBody | ResetBody; sessionId?: string };

/** A POST route of a session command: how a request becomes the command, and how its result is answered. */
interface CommandRoute<K extends CommandKind> {
  command(request: Request): CommandOf<K>;
  answer(result: CommandResult<K>, command: CommandOf<K>): Answer;
}

const accepted = (sessionId: string, deliveryId?: string): Answer => ({
  status: 202,
  sessionId,
  body: { ok: true, sessionId, status: 'accepted', ...(deliveryId !== undefined ? { deliveryId } : {}) },
});

/** `accepted` (202, naming the session) or the status alone (200). */
const acceptedOr = (status: 'accepted' | 'no_active_turn' | 'no_active_session', sessionId: string): Answer =>
  status === 'accepted' ? { status: 202, body: { ok: true, status, sessionId } } : { status: 200, body: { ok: true, status } };

export function sessionRoutes({ sessions, journal, uploads, limits, streams, ownership }: SessionRoutesOptions): Router {
  const router = Router();
  if (ownership) router.param('sessionId', (request, _response, next) => void ownership.check(sessionIdOf(request), principalOf(request)).then(() => next(), next));

  function post<K extends CommandKind>(path: string, route: CommandRoute<K>): void {
    router.post(path, (async (request, response) => {
      const command = route.command(request);
      const { status, body, sessionId } = route.answer(await sessions.execute(command), command);
      if (sessionId !== undefined) response.set(HEADERS.sessionId, sessionId).set('cache-control', 'no-store');
      response.status(status).json(body);
    }) satisfies RequestHandler);
  }

  post<'create'>(ROUTES.sessions, {
    command: (request) => {
      const body = createBody.parse(jsonBody(request, { bareAllowed: true }));
      return {
        kind: 'create',
        principal: principalOf(request),
        ...(body.message !== undefined ? { input: toMessageInput(body.message, uploads, limits, body.clientContext) } : {}),
        ...(body.operationId !== undefined ? { operationId: body.operationId } : {}),
      };
    },
    answer: (sessionId) => accepted(sessionId),
  });

  // A follow-up is a message or answers: two commands behind one route.
  router.post(ROUTES.session, (async (request, response) => {
    const sessionId = sessionIdOf(request);
    const body = followUpBody.parse(jsonBody(request));
    if (body.kind === 'answers') checkTextBytes(body.inputResponses.flatMap((r) => (r.text === undefined ? [] : [r.text])), limits);
    const deliveryId =
      body.kind === 'answers'
        ? await sessions.execute({ kind: 'respond', sessionId, responses: body.inputResponses })
        : await sessions.execute({
            kind: 'send',
            sessionId,
            principal: principalOf(request),
            input: toMessageInput(body.message, uploads, limits, body.clientContext),
            policy: body.turnPolicy,
            deliveryId: newDeliveryId(),
          });
    const { status, body: answer } = accepted(sessionId, deliveryId);
    response.status(status).set(HEADERS.sessionId, sessionId).set('cache-control', 'no-store').json(answer);
  }) satisfies RequestHandler);

  post<'cancel'>(ROUTES.cancel, {
    command: (request) => {
      const { turnId } = cancelBody.parse(jsonBody(request));
      return { kind: 'cancel', sessionId: sessionIdOf(request), ...(turnId !== undefined ? { turnId } : {}) };
    },
    answer: (status, { sessionId }) => acceptedOr(status, sessionId),
  });

  post<'clear'>(ROUTES.clear, {
    command: (request) => (jsonBody(request), { kind: 'clear', sessionId: sessionIdOf(request) }),
    answer: (status, { sessionId }) => acceptedOr(status, sessionId),
  });

  post<'compact'>(ROUTES.compact, {
    command: (request) => (jsonBody(request), { kind: 'compact', sessionId: sessionIdOf(request) }),
    answer: (status, { sessionId }) => acceptedOr(status, sessionId),
  });

  post<'reset'>(ROUTES.reset, {
    command: (request) => (resetBody.parse(jsonBody(request)), { kind: 'reset', sessionId: sessionIdOf(request) }),
    answer: (status, { sessionId }) => ({
      status: 200,
      body: status === 'reset' ? { ok: true, status, previousSessionId: sessionId } : { ok: true, status },
    }),
  });

  router.get(ROUTES.stream, (async (request, response) => {
    const plan = await resolveStreamPlan(sessions, journal, sessionIdOf(request), request.query);
    // The client may have gone while the plan was read: its 'close' has fired already.
    if (response.destroyed) return;
    streams.stream(response, plan);
    // Express leaves its routers' `next` on the request, holding every router's state for as long
    // as the response is open; a stream stays open for hours and needs none of it.
    request.next = undefined;
  }) satisfies RequestHandler);

  return router;
}
