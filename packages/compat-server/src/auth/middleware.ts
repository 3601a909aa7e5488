import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { errorBody } from '@eve-flue/eve-protocol';
import type { Logger } from '../logger.ts';
import type { Principal, RouteAuth } from './route-auth.ts';

const PRINCIPAL = Symbol('principal');

/**
 * Eve's synthetic development caller (`principalId: "local-dev"`): who an anonymous caller is, in
 * development with route auth off, where Eve needs a principal (an `operationId`, a forwarder).
 */
export const LOCAL_DEV_PRINCIPAL: Principal = Object.freeze({ id: 'local-dev', type: 'service' });

/** The principal route auth admitted; undefined for anonymous development access. */
export function principalOf(request: Request): Principal | undefined {
  return (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL];
}

/** Who `auth` admits; a route auth that throws admits nobody. */
export async function admit(auth: RouteAuth, request: IncomingMessage, path: string, logger: Logger): Promise<Principal | null> {
  try {
    return await auth(request);
  } catch (error) {
    logger.warn({ err: error, path }, 'route auth threw; refusing the request');
    return null;
  }
}

/** Admits a request through `auth`, or anonymously when `auth` is undefined (development only). */
export function requireRouteAuth(auth: RouteAuth | undefined, logger: Logger): RequestHandler {
  return async (request, response, next) => {
    if (!auth) return next();
    const principal = await admit(auth, request, request.path, logger);
    if (!principal) {
      response.status(401).set('www-authenticate', 'Bearer').json(errorBody('unauthorized', 'This route needs valid credentials.'));
      return;
    }
    (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL] = principal;
    next();
  };
}
