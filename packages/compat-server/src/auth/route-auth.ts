import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger, Principal } from '@eve-flue/session-contract';

export type { Principal };

/** What route auth knows besides the request: whether the bridge runs in development, and where to log. */
export interface RouteAuthContext {
  mode: 'development' | 'production';
  logger: Logger;
}

/** One `WWW-Authenticate` challenge a strategy answers, e.g. `{ scheme: 'Basic', parameters: { realm: 'eve' } }`. */
export interface AuthChallenge {
  scheme: string;
  parameters?: Readonly<Record<string, string>>;
}

/**
 * Decides who a request comes from (Eve's `AuthFn`). Return a principal to admit it, `null` to
 * let the next strategy try; throw (`UnauthenticatedError`, `ForbiddenError`, anything) to refuse
 * it outright. `challenges` are the schemes it answers, for the 401's `WWW-Authenticate`.
 */
export type RouteAuth = ((request: IncomingMessage, context: RouteAuthContext) => Principal | null | undefined | Promise<Principal | null | undefined>) & {
  readonly challenges?: readonly AuthChallenge[];
};

/** `auth` in a config: one strategy, or several tried in order (the first principal wins). */
export type RouteAuthPolicy = RouteAuth | readonly RouteAuth[];

/** Declares the schemes a custom strategy answers (Eve's `withAuthChallenges`). */
export function withAuthChallenges(strategy: RouteAuth, challenges: readonly AuthChallenge[]): RouteAuth {
  const wrapped: RouteAuth = (request, context) => strategy(request, context);
  return Object.defineProperty(wrapped, 'challenges', { value: Object.freeze(challenges.map((c) => Object.freeze({ ...c }))), enumerable: true });
}

/** SHA-256 both sides so lengths match, then compare in constant time. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header && /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Static bearer tokens, each naming the principal it admits. Every configured token is compared
 * (in constant time), so timing reveals neither which token matched nor how many exist.
 */
export function bearerTokens(tokens: Record<string, string | Principal>): RouteAuth {
  const entries = Object.entries(tokens).map(([token, who]) => ({
    token,
    principal: Object.freeze(typeof who === 'string' ? ({ id: who, type: 'service' } as Principal) : who),
  }));
  if (entries.some((e) => e.token.length < 16)) throw new Error('bearerTokens: every token must be at least 16 characters long.');
  return withAuthChallenges((request) => {
    const given = bearerToken(request);
    if (given === undefined) return null;
    let found: Principal | null = null;
    for (const entry of entries) if (secretsEqual(given, entry.token)) found = entry.principal;
    return found;
  }, [{ scheme: 'Bearer' }]);
}
