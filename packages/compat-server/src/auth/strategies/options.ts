import { isIP } from 'node:net';

/** A strategy's options failed validation; the message names the strategy and the field. */
export class AuthConfigError extends Error {
  override name = 'AuthConfigError';
}

export type Fail = (field: string, problem: string) => never;

export function failFor(strategy: string): Fail {
  return (field, problem) => {
    throw new AuthConfigError(`[eve-flue] ${strategy}(): \`${field}\` ${problem}`);
  };
}

export function checkKeys(options: object, allowed: readonly string[], fail: Fail): void {
  for (const key of Object.keys(options)) if (!allowed.includes(key)) fail(key, 'is not an option');
}

export function checkString(value: unknown, field: string, fail: Fail): string {
  if (typeof value !== 'string' || value.length === 0) fail(field, 'must be a non-empty string');
  return value as string;
}

export function checkAudiences(value: unknown, fail: Fail): readonly string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((a) => typeof a !== 'string' || a.length === 0)) {
    fail('audiences', 'must be a non-empty array of strings (the `aud` values this bridge accepts)');
  }
  return Object.freeze([...(value as string[])]);
}

/** Eve's default tolerance for `exp`/`nbf`. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30;

export function checkClockSkew(value: unknown, fail: Fail): number {
  if (value === undefined) return DEFAULT_CLOCK_SKEW_SECONDS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 600) fail('clockSkewSeconds', 'must be a whole number of seconds from 0 to 600');
  return value as number;
}

/** `https:`, or `http:` on a loopback host only, with no credentials, query or fragment. */
export function checkIdentifierUrl(value: unknown, field: string, fail: Fail): URL {
  if (typeof value !== 'string' || !URL.canParse(value)) return fail(field, 'must be an absolute URL');
  const url = new URL(value);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) fail(field, 'must be https (http only on a loopback host)');
  if (url.username || url.password || url.search || url.hash) fail(field, 'may not carry credentials, a query or a fragment');
  return url;
}

export function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}
