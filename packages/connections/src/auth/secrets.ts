import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, base64url. */
export const randomSecret = (): string => randomBytes(32).toString('base64url');

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('base64url');

/** Whether `secret` hashes to `expectedHash`, compared in constant time. */
export function matchesHash(secret: string, expectedHash: string): boolean {
  const given = Buffer.from(sha256(secret));
  const expected = Buffer.from(expectedHash);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
