import { Router, type Request, type RequestHandler } from 'express';
import { HEADERS, ROUTES, type AcceptedBody, type CancelBody, type ControlBody, type ResetBody } from '@eve-flue/eve-protocol';
import type { CommandKind, CommandOf, CommandResult } from '@eve-flue/session-contract';
import { principalOf } from '../auth/middleware.ts';
import type { SessionOwnership } from '../auth/ownership.ts';
import type { Principal } from '../auth/route-auth.ts';
import type { RemoteCallbacks } from '../remote/callbacks.ts';
import { resolveForwardedPrincipal, type TrustedForwarders } from '../remote/forwarded-principal.ts';
import { LEGACY_REMOTE_AGENT_PROTOCOL_VERSION, parseRemoteCaller, REMOTE_AGENT_PROTOCOL_VERSION } from '../remote/protocol.ts';
import { compileOutputSchema } from '../session/structured-output.ts';
import { isJson } from '../http/json-body.ts';
import { checkTextBytes, type RequestLimits } from '../http/limits.ts';
import { toMessageInput, type UploadPolicy } from '../http/message.ts';
import { cancelBody, createBody, followUpBody, resetBody, type MessageBody } from '../http/schemas.ts';
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
  /** Where a remote-agent parent's callbacks are owed and delivered from. */
  callbacks: RemoteCallbacks;
  /** Who may assert a forwarded principal; absent, none may. */
  trustedForwarders?: TrustedForwarders;
  /** Who an anonymous caller is when it forwards a principal (development: Eve's `local-dev`). */
  anonymousCaller?: Principal;
}

/**
 * Whether a request comes from no browser page of another site (Fetch Metadata): a server-side
 * caller sends neither `Sec-Fetch-Site` nor `Origin`; a browser names the site it comes from.
 */
function notCrossSite(request: Request): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  return request.headers.origin === undefined;
}

/**
 * `POST` bodies: an absent or empty body is `{}`. A POST with a body must say `application/json`
 * (a page on another origin cannot send that without a CORS preflight). A bodyless POST with no
 * content type is accepted for a create (the client's prewarm, which only opens an empty
 * session) and, unless a browser says it comes from another site, for a control (an Eve parent
 * cancels its remote child that way), so a cross-site page still cannot end or steer a session.
 */
function jsonBody(request: Request, { bareAllowed = false } = {}): unknown {
  const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  const bare = !hasBody && request.headers['content-type'] === undefined;
  if (!(bare && (bareAllowed || notCrossSite(request))) && !isJson(request.headers['content-type'])) {
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

export function sessionRoutes({ sessions, journal, uploads, limits, streams, ownership, callbacks, trustedForwarders, anonymousCaller }: SessionRoutesOptions): Router {
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

  /** The caller a turn runs as: the route-authenticated one, or the principal it forwards and is trusted to. */
  async function callerOf(request: Request, forwarded: unknown): Promise<Principal | undefined> {
    const authenticated = principalOf(request);
    if (forwarded === undefined) return authenticated;
    const forwarder = authenticated ?? anonymousCaller;
    if (!forwarder) throw new RequestError('forbidden', 'This deployment does not accept a forwarded principal.');
    return resolveForwardedPrincipal(forwarded, forwarder, trustedForwarders);
  }

  const input = (message: MessageBody, clientContext: unknown, outputSchema: Record<string, unknown> | undefined) => {
    if (outputSchema) compileOutputSchema(outputSchema);
    return { ...toMessageInput(message, uploads, limits, clientContext), ...(outputSchema ? { outputSchema } : {}) };
  };

  router.post(ROUTES.sessions, (async (request, response) => {
    const body = createBody.parse(jsonBody(request, { bareAllowed: true }));
    const principal = await callerOf(request, body.forwardedPrincipal);
    const caller = parseRemoteCaller(body.callback, body.protocolVersion, LEGACY_REMOTE_AGENT_PROTOCOL_VERSION);
    const deliveryId = newDeliveryId();
    const sessionId = await sessions.execute({
      kind: 'create',
      principal,
      ...(body.message !== undefined ? { input: input(body.message, body.clientContext, body.outputSchema), deliveryId } : {}),
      ...(body.operationId !== undefined ? { operationId: body.operationId } : {}),
    });
    // The first turn's binding: a create repeated with its operationId binds the same turn again.
    if (caller) await callbacks.bind(sessionId, { caller, ...(body.outputSchema ? { structured: true } : {}) });
    const { status, body: answer } = accepted(sessionId);
    response
      .status(status)
      .set(HEADERS.sessionId, sessionId)
      .set('cache-control', 'no-store')
      .json({ ...answer, ...(caller ? { protocolVersion: caller.protocolVersion } : {}) });
  }) satisfies RequestHandler);

  // A follow-up is a message or answers: two commands behind one route.
  router.post(ROUTES.session, (async (request, response) => {
    const sessionId = sessionIdOf(request);
    const body = followUpBody.parse(jsonBody(request));
    const principal = await callerOf(request, body.forwardedPrincipal);
    if (body.kind === 'answers') checkTextBytes(body.inputResponses.flatMap((r) => (r.text === undefined ? [] : [r.text])), limits);
    // A follow-up names no protocol version: a protocol-1 parent is known by the `taskId` in its callback.
    const caller = body.kind === 'message' ? parseRemoteCaller(body.callback, undefined, REMOTE_AGENT_PROTOCOL_VERSION) : undefined;
    let deliveryId: string;
    if (body.kind === 'answers') {
      deliveryId = await sessions.execute({ kind: 'respond', sessionId, responses: body.inputResponses });
    } else {
      const command = {
        kind: 'send',
        sessionId,
        principal,
        input: input(body.message, body.clientContext, body.outputSchema),
        policy: body.turnPolicy,
        deliveryId: newDeliveryId(),
      } as const;
      // Bound before the message can start a turn, so no reply of that turn goes unowed.
      if (caller) await callbacks.bind(sessionId, { caller, deliveryId: command.deliveryId, ...(body.outputSchema ? { structured: true } : {}) });
      deliveryId = await sessions.execute(command);
    }
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
