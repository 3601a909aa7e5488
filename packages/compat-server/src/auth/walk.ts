import type { IncomingMessage } from 'node:http';
import type { Logger } from '../logger.ts';
import { ForbiddenError, UnauthenticatedError } from './refusals.ts';
import type { AuthChallenge, Principal, RouteAuth, RouteAuthContext, RouteAuthPolicy } from './route-auth.ts';

/** Why a request was refused, as the 401/403 answers it. */
export interface AuthRefusal {
  code: 'unauthorized' | 'forbidden';
  message: string;
  /** `WWW-Authenticate` values, one per scheme (none on a 403). */
  challenges: string[];
}

export type Admission = { ok: true; principal: Principal } | { ok: false; refusal: AuthRefusal };

const DEFAULT_MESSAGE = 'Authorization is required for this route.';

/**
 * Eve's ordered auth walk: each strategy in turn; the first principal admits the request, `null`
 * moves on, a throw refuses it at once (403 for `ForbiddenError`, else 401). When every strategy
 * passes, 401 with the challenges they declare (`Bearer` for those that declare none).
 */
export async function authenticate(policy: RouteAuthPolicy, request: IncomingMessage, context: RouteAuthContext): Promise<Admission> {
  const strategies = strategiesOf(policy);
  for (const strategy of strategies) {
    try {
      const principal = await strategy(request, context);
      if (principal) return { ok: true, principal };
    } catch (error) {
      return { ok: false, refusal: refusalFor(error, strategies, request, context.logger) };
    }
  }
  return { ok: false, refusal: { code: 'unauthorized', message: DEFAULT_MESSAGE, challenges: challengesFor(strategies, request) } };
}

export function strategiesOf(policy: RouteAuthPolicy): readonly RouteAuth[] {
  return typeof policy === 'function' ? [policy] : policy;
}

function refusalFor(error: unknown, strategies: readonly RouteAuth[], request: IncomingMessage, logger: Logger): AuthRefusal {
  if (error instanceof ForbiddenError) return { code: 'forbidden', message: error.message, challenges: [] };
  if (error instanceof UnauthenticatedError) {
    return { code: 'unauthorized', message: error.message, challenges: error.challenges ? error.challenges.map(formatChallenge) : challengesFor(strategies, request) };
  }
  logger.warn({ err: error, path: request.url?.split('?')[0] }, 'route auth threw; refusing the request');
  return { code: 'unauthorized', message: DEFAULT_MESSAGE, challenges: challengesFor(strategies, request) };
}

/** One challenge per distinct scheme; `Bearer error="invalid_token"` when a bearer token was sent. */
function challengesFor(strategies: readonly RouteAuth[], request: IncomingMessage): string[] {
  const declared = strategies.flatMap((s) => s.challenges ?? []);
  // Eve's fallback when no strategy declares a scheme (custom functions, an empty list).
  const offered: readonly AuthChallenge[] = declared.length > 0 ? declared : [{ scheme: 'Bearer' }];
  const sentBearer = /^Bearer(\s|$)/i.test(request.headers.authorization?.trim() ?? '');
  const answered = offered.map((c) => (sentBearer && c.scheme === 'Bearer' && c.parameters?.error === undefined ? { ...c, parameters: { ...c.parameters, error: 'invalid_token' } } : c));
  return [...new Set(answered.map(formatChallenge))];
}

function formatChallenge(challenge: AuthChallenge): string {
  const parameters = Object.entries(challenge.parameters ?? {});
  if (parameters.length === 0) return challenge.scheme;
  return `${challenge.scheme} ${parameters.map(([k, v]) => `${k}="${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(', ')}`;
}
