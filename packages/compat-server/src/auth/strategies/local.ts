import type { Principal } from '@eve-flue/session-contract';
import type { RouteAuth } from '../route-auth.ts';

/**
 * Eve's synthetic development caller. Also who an anonymous caller is, in development with route
 * auth off, where Eve needs a principal: an `operationId`'s owner, a forwarder.
 */
export const LOCAL_DEV: Principal = Object.freeze({ id: 'local-dev', type: 'local-dev', attributes: Object.freeze({}) });
const ANONYMOUS: Principal = Object.freeze({ id: 'anonymous', type: 'anonymous', attributes: Object.freeze({}) });

/**
 * Eve's `localDev()`: the synthetic `local-dev` principal, only while the bridge runs in
 * development mode (a property of the deployment, never of the request); in production it admits
 * nobody, so it is safe to leave last in the list.
 */
export function localDev(): RouteAuth {
  return (_request, context) => (context.mode === 'development' ? LOCAL_DEV : null);
}

/**
 * Eve's `none()`: admits every caller, anonymously (put it last). Anonymous callers share no
 * sign-ins and own no sessions: each is keyed by its session, as without route auth.
 */
export function none(): RouteAuth {
  return () => ANONYMOUS;
}
