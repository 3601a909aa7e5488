import { jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { Principal } from '@eve-flue/session-contract';
import { matchersSatisfied, tokenPrincipal, type ClaimMatchers } from './claims.ts';

export interface TokenRules {
  /** The only algorithms accepted: a token naming another (`none`, HS256 against a public key) fails. */
  algorithms: readonly string[];
  issuer: string;
  audiences: readonly string[];
  clockSkewSeconds: number;
  matchers: ClaimMatchers;
}

/**
 * The caller a JWT proves, or null when it does not verify (signature, `alg`, `iss`, `aud`,
 * `exp`, `nbf`, a `sub`) or its subject and claims are not the ones accepted.
 */
export async function verifyToken(token: string, key: KeyObject | JWTVerifyGetKey, rules: TokenRules): Promise<Principal | null> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, key as KeyObject, {
      algorithms: [...rules.algorithms],
      issuer: rules.issuer,
      audience: [...rules.audiences],
      clockTolerance: rules.clockSkewSeconds,
      requiredClaims: ['exp', 'sub'],
    }));
  } catch {
    return null;
  }
  const { iss, sub } = payload;
  if (typeof iss !== 'string' || typeof sub !== 'string' || sub.length === 0) return null;
  if (!matchersSatisfied(payload, rules.matchers)) return null;
  return tokenPrincipal({ ...payload, iss, sub });
}
