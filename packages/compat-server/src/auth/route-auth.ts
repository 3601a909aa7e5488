import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Principal } from '@eve-flue/session-contract';

export type { Principal };

/**
 * Decides who a request comes from. Return a principal to admit it, `null` to refuse it.
 * Thrown errors refuse it too.
 */
export type RouteAuth = (request: IncomingMessage) => Principal | null | Promise<Principal | null>;

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
    principal: typeof who === 'string' ? ({ id: who, type: 'service' } as Principal) : who,
  }));
  if (entries.some((e) => e.token.length < 16)) throw new Error('bearerTokens: every token must be at least 16 characters long.');
  return (request) => {
    const given = bearerToken(request);
    if (given === undefined) return null;
    let found: Principal | null = null;
    for (const entry of entries) if (secretsEqual(given, entry.token)) found = entry.principal;
    return found;
  };
}
