import type { Request, RequestHandler } from 'express';
import { errorBody } from '@eve-flue/eve-protocol';
import type { Logger } from '../logger.ts';
import type { Principal, RouteAuth } from './route-auth.ts';

const PRINCIPAL = Symbol('principal');

/** The principal route auth admitted; undefined for anonymous development access. */
export function principalOf(request: Request): Principal | undefined {
  return (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL];
}

/** Admits a request through `auth`, or anonymously when `auth` is undefined (development only). */
export function requireRouteAuth(auth: RouteAuth | undefined, logger: Logger): RequestHandler {
  return async (request, response, next) => {
    if (!auth) return next();
    let principal: Principal | null = null;
    try {
      principal = await auth(request);
    } catch (error) {
      logger.warn({ err: error, path: request.path }, 'route auth threw; refusing the request');
    }
    if (!principal) {
      response.status(401).set('www-authenticate', 'Bearer').json(errorBody('unauthorized', 'This route needs valid credentials.'));
      return;
    }
    (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL] = principal;
    next();
  };
}
