import type { JWTPayload } from 'jose';
import type { Principal } from '@eve-flue/session-contract';
import type { Fail } from './options.ts';

/** Who a token may be (`subjects`, `*` wildcards) and which claims it must carry (`claims`: any of the listed values). */
export interface ClaimMatchers {
  subjects?: readonly string[];
  claims?: Readonly<Record<string, readonly string[]>>;
}

export function checkMatchers(options: ClaimMatchers, fail: Fail): ClaimMatchers {
  const { subjects, claims } = options;
  if (subjects !== undefined && (!Array.isArray(subjects) || subjects.some((s) => typeof s !== 'string' || s.length === 0))) fail('subjects', 'must be an array of non-empty strings');
  if (claims !== undefined) {
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) fail('claims', 'must be an object of claim name → accepted values');
    for (const [name, values] of Object.entries(claims)) {
      if (!Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== 'string')) fail(`claims.${name}`, 'must be a non-empty array of strings');
    }
  }
  return Object.freeze({
    ...(subjects !== undefined ? { subjects: Object.freeze([...subjects]) } : {}),
    ...(claims !== undefined ? { claims: Object.freeze(Object.fromEntries(Object.entries(claims).map(([k, v]) => [k, Object.freeze([...v])]))) } : {}),
  });
}

/** String and string-array claims only, as Eve keeps them. */
function stringClaims(payload: JWTPayload): Record<string, string | readonly string[]> {
  const kept: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (typeof value === 'string') kept[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) kept[name] = Object.freeze([...value]);
  }
  return kept;
}

export function matchersSatisfied(payload: JWTPayload, matchers: ClaimMatchers): boolean {
  if (matchers.subjects !== undefined) {
    const sub = payload.sub;
    if (typeof sub !== 'string' || !matchers.subjects.some((pattern) => wildcardMatches(pattern, sub))) return false;
  }
  const claims = stringClaims(payload);
  return Object.entries(matchers.claims ?? {}).every(([name, accepted]) => {
    const value = claims[name];
    if (value === undefined) return false;
    return typeof value === 'string' ? accepted.includes(value) : value.some((v) => accepted.includes(v));
  });
}

function wildcardMatches(pattern: string, value: string): boolean {
  if (!pattern.includes('*')) return pattern === value;
  const source = pattern.replaceAll(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*');
  return new RegExp(`^${source}$`).test(value);
}

const REGISTERED = new Set(['aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'sub']);

/** A verified token's caller, as Eve builds it: id `<iss>:<sub>`, the other claims as attributes. */
export function tokenPrincipal(payload: JWTPayload & { iss: string; sub: string }): Principal {
  const attributes = Object.fromEntries(Object.entries(stringClaims(payload)).filter(([name]) => !REGISTERED.has(name)));
  return Object.freeze({
    id: `${payload.iss}:${payload.sub}`,
    type: 'service',
    issuer: payload.iss,
    subject: payload.sub,
    attributes: Object.freeze(attributes),
  });
}
