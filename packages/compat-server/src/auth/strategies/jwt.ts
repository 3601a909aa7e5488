import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { bearerToken, withAuthChallenges, type RouteAuth } from '../route-auth.ts';
import { checkMatchers, type ClaimMatchers } from './claims.ts';
import { checkAudiences, checkClockSkew, checkKeys, checkString, failFor, type Fail } from './options.ts';
import { verifyToken, type TokenRules } from './verify-jwt.ts';

interface JwtOptions extends ClaimMatchers {
  issuer: string;
  audiences: readonly string[];
  /** Tolerance for `exp` and `nbf`. Default 30. */
  clockSkewSeconds?: number;
}

export interface JwtHmacOptions extends JwtOptions {
  algorithm: 'HS256' | 'HS384' | 'HS512';
  /** The shared secret (UTF-8), at least as many bytes as the hash: 32 for HS256. */
  secret: string;
}

export interface JwtEcdsaOptions extends JwtOptions {
  algorithm: 'ES256' | 'ES384' | 'ES512';
  /** The signer's public key: SPKI PEM, or a JWK as JSON. */
  publicKey: string;
}

const COMMON = ['issuer', 'audiences', 'clockSkewSeconds', 'subjects', 'claims', 'algorithm'];
const HMAC_BYTES = { HS256: 32, HS384: 48, HS512: 64 } as const;
const CURVES = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' } as const;

function rules(options: JwtOptions & { algorithm: string }, fail: Fail): TokenRules {
  return {
    algorithms: [options.algorithm],
    issuer: checkString(options.issuer, 'issuer', fail),
    audiences: checkAudiences(options.audiences, fail),
    clockSkewSeconds: checkClockSkew(options.clockSkewSeconds, fail),
    matchers: checkMatchers(options, fail),
  };
}

function bearerStrategy(key: KeyObject, tokenRules: TokenRules): RouteAuth {
  return withAuthChallenges(async (request) => {
    const token = bearerToken(request);
    return token === undefined ? null : verifyToken(token, key, tokenRules);
  }, [{ scheme: 'Bearer' }]);
}

/** Bearer JWTs signed with a shared secret, one HMAC algorithm pinned (Eve's `jwtHmac`). */
export function jwtHmac(options: JwtHmacOptions): RouteAuth {
  const fail = failFor('jwtHmac');
  checkKeys(options, [...COMMON, 'secret'], fail);
  if (!Object.hasOwn(HMAC_BYTES, options.algorithm)) fail('algorithm', 'must be "HS256", "HS384" or "HS512"');
  const secret = checkString(options.secret, 'secret', fail);
  if (Buffer.byteLength(secret) < HMAC_BYTES[options.algorithm]) fail('secret', `must be at least ${HMAC_BYTES[options.algorithm]} bytes for ${options.algorithm}`);
  return bearerStrategy(createSecretKey(Buffer.from(secret, 'utf8')), rules(options, fail));
}

/** Bearer JWTs signed by another system's ECDSA key, one algorithm pinned (Eve's `jwtEcdsa`). */
export function jwtEcdsa(options: JwtEcdsaOptions): RouteAuth {
  const fail = failFor('jwtEcdsa');
  checkKeys(options, [...COMMON, 'publicKey'], fail);
  if (!Object.hasOwn(CURVES, options.algorithm)) fail('algorithm', 'must be "ES256", "ES384" or "ES512"');
  const text = checkString(options.publicKey, 'publicKey', fail).trim();
  let key: KeyObject;
  try {
    key = text.startsWith('{') ? createPublicKey({ key: JSON.parse(text), format: 'jwk' }) : createPublicKey(text);
  } catch {
    return fail('publicKey', 'is not a public key (SPKI PEM or JWK JSON)');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== CURVES[options.algorithm]) {
    fail('publicKey', `must be an EC key on the curve of ${options.algorithm}`);
  }
  return bearerStrategy(key, rules(options, fail));
}
