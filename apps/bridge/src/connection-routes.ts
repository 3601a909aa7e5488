import { Router, type Request } from 'express';
import { BRIDGE_ROUTES } from '@eve-flue/eve-protocol';
import { principalOf, RequestError } from '@eve-flue/compat-server';
import { subjectKey, type ConnectionRegistry, type ConnectionSets, type ConnectionStatus, type SignInBroker } from '@eve-flue/connections';

/** The caller's sign-in key: their principal, or for an anonymous caller the `sessionId` they name. */
function callerSubject(request: Request): string | undefined {
  const principal = principalOf(request);
  const sessionId = typeof request.query.sessionId === 'string' ? request.query.sessionId : undefined;
  if (!principal && !sessionId) return undefined;
  return subjectKey(principal?.id, sessionId ?? '');
}

/**
 * `GET /connections`: each connection's tools and state for the caller (with per-caller sets,
 * the caller's set, resolved for their principal and `?sessionId=`); `DELETE …/authorization`: sign out.
 */
export function connectionRoutes(connections: ConnectionRegistry, broker: SignInBroker, sets?: ConnectionSets): Router {
  const router = Router();

  router.get(BRIDGE_ROUTES.connections, async (request, response) => {
    const subject = callerSubject(request);
    const principal = principalOf(request);
    const sessionId = typeof request.query.sessionId === 'string' ? request.query.sessionId : undefined;
    const registry = sets
      ? await sets.for({ ...(principal ? { principal } : {}), ...(sessionId ? { sessionId } : {}) }).catch((error: unknown) => {
          throw new RequestError('service_unavailable', `The connections for this caller could not be resolved: ${error instanceof Error ? error.message.replace(/^\[eve-flue\] /, '') : 'unknown error'}`);
        })
      : connections;
    const statuses = await Promise.all(
      registry.status(principal?.id).map(async (status): Promise<ConnectionStatus> => {
        if (status.state !== 'ready' || !broker.handles(status.name)) return status;
        if (subject && (await broker.token(status.name, subject))) return status;
        return { ...status, state: 'needs_sign_in', missing: [`sign in to ${status.name}: no token is held for this caller`] };
      }),
    );
    response.set('cache-control', 'no-store').json({ ok: true, connections: statuses });
  });

  router.delete(BRIDGE_ROUTES.connectionAuthorization, async (request, response) => {
    const name = String(request.params.name);
    if (!connections.definitions().some((d) => d.name === name)) throw new RequestError('not_found', `No connection named ${name}.`);
    if (!broker.handles(name)) throw new RequestError('invalid_request', `Connection ${name} has no sign-in.`);
    const subject = callerSubject(request);
    if (!subject) throw new RequestError('invalid_request', 'Anonymous callers name the session: ?sessionId=<id>.');
    const { signedOut, revoked } = await broker.signOut(name, subject);
    response.json({ ok: true, status: signedOut ? 'signed_out' : 'not_signed_in', revoked });
  });

  return router;
}
