import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { sendRefusal } from '../http/refusal.ts';
import type { Logger } from '../logger.ts';
import type { Principal, RouteAuth } from './route-auth.ts';

const PRINCIPAL = Symbol('principal');

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
      sendRefusal(response, 'unauthorized', 'This route needs valid credentials.', { 'www-authenticate': 'Bearer' });
      return;
    }
    (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL] = principal;
    next();
  };
}
