import type { Request, RequestHandler, Response } from 'express';
import { sendRefusal } from '../http/refusal.ts';
import type { Principal, RouteAuthContext, RouteAuthPolicy } from './route-auth.ts';
import { authenticate, type AuthRefusal } from './walk.ts';

const PRINCIPAL = Symbol('principal');

/** The principal route auth admitted; undefined for an anonymous caller (`none()`, or no auth in development). */
export function principalOf(request: Request): Principal | undefined {
  return (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL];
}

/** Eve's `none()` admits everyone as one `anonymous` principal: for sign-ins and ownership that is nobody in particular. */
export function identified(principal: Principal): Principal | undefined {
  return principal.type === 'anonymous' ? undefined : principal;
}

/** The headers every auth refusal carries, on either transport. */
export function refusalHeaders(refusal: AuthRefusal): Record<string, string | string[]> {
  return { 'cache-control': 'no-store', ...(refusal.challenges.length > 0 ? { 'www-authenticate': refusal.challenges } : {}) };
}

function refuse(response: Response, refusal: AuthRefusal): void {
  sendRefusal(response, refusal.code, refusal.message, { headers: refusalHeaders(refusal) });
}

/** Admits a request through `auth`, or anonymously when `auth` is undefined (development only). */
export function requireRouteAuth(auth: RouteAuthPolicy | undefined, context: RouteAuthContext): RequestHandler {
  return async (request, response, next) => {
    if (!auth) return next();
    const admission = await authenticate(auth, request, context);
    if (!admission.ok) return refuse(response, admission.refusal);
    const principal = identified(admission.principal);
    if (principal) (request as Request & { [PRINCIPAL]?: Principal })[PRINCIPAL] = principal;
    next();
  };
}
