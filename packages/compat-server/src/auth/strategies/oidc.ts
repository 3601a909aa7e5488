import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import type { Logger } from '@eve-flue/session-contract';
import { bearerToken, withAuthChallenges, type RouteAuth } from '../route-auth.ts';
import { checkMatchers, type ClaimMatchers } from './claims.ts';
import { checkAudiences, checkClockSkew, checkIdentifierUrl, checkKeys, failFor } from './options.ts';
import { verifyToken, type TokenRules } from './verify-jwt.ts';

export interface OidcOptions extends ClaimMatchers {
  /** The issuer's identifier: tokens must carry it as `iss`, and discovery must name it. */
  issuer: string;
  /** The `aud` values accepted (any one). */
  audiences: readonly string[];
  /** Default `<issuer>/.well-known/openid-configuration`. */
  discoveryUrl?: string;
  /** Tolerance for `exp` and `nbf`. Default 30. */
  clockSkewSeconds?: number;
}

/** Asymmetric algorithms only: a JWKS never holds an HMAC secret, and `none` is no signature. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** An unknown `kid` refetches the JWKS (a rotation), at most once in this long. */
const JWKS_REFETCH_COOLDOWN_MS = 5_000;
const JWKS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;
/** After a failed discovery, requests wait this long before the next try instead of each retrying. */
const DISCOVERY_RETRY_MS = 10_000;
const MAX_DISCOVERY_BYTES = 256 * 1024;

const discoveryDocument = z.looseObject({ issuer: z.string(), jwks_uri: z.string() });

/**
 * Bearer tokens from an OpenID Connect issuer (Eve's `oidc`): keys from its discovery document's
 * JWKS, signature, `iss`, `aud`, `exp` and `nbf` checked, then `subjects` and `claims`.
 */
export function oidc(options: OidcOptions): RouteAuth {
  const fail = failFor('oidc');
  checkKeys(options, ['issuer', 'audiences', 'discoveryUrl', 'clockSkewSeconds', 'subjects', 'claims'], fail);
  checkIdentifierUrl(options.issuer, 'issuer', fail);
  // Compared as written: `iss` must be exactly this string.
  const issuer = options.issuer;
  const discoveryUrl = options.discoveryUrl === undefined
    ? new URL(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)
    : checkIdentifierUrl(options.discoveryUrl, 'discoveryUrl', fail);
  const rules: TokenRules = {
    algorithms: ALGORITHMS,
    issuer,
    audiences: checkAudiences(options.audiences, fail),
    clockSkewSeconds: checkClockSkew(options.clockSkewSeconds, fail),
    matchers: checkMatchers(options, fail),
  };
  const keys = issuerKeys(issuer, discoveryUrl);
  return withAuthChallenges(async (request, context) => {
    const token = bearerToken(request);
    if (token === undefined) return null;
    const jwks = await keys(context.logger);
    return jwks ? verifyToken(token, jwks, rules) : null;
  }, [{ scheme: 'Bearer' }]);
}

/** The issuer's key set, discovered on first use; a failed discovery is retried after a pause. */
function issuerKeys(issuer: string, discoveryUrl: URL): (logger: Logger) => Promise<JWTVerifyGetKey | undefined> {
  let keys: Promise<JWTVerifyGetKey> | undefined;
  let failedAt = -Infinity;
  return async (logger) => {
    if (!keys && Date.now() - failedAt < DISCOVERY_RETRY_MS) return undefined;
    keys ??= discover(issuer, discoveryUrl).then((jwksUri) =>
      createRemoteJWKSet(jwksUri, { cooldownDuration: JWKS_REFETCH_COOLDOWN_MS, cacheMaxAge: JWKS_MAX_AGE_MS, timeoutDuration: FETCH_TIMEOUT_MS }),
    );
    try {
      return await keys;
    } catch (error) {
      keys = undefined;
      failedAt = Date.now();
      logger.warn({ issuer, discoveryUrl: discoveryUrl.href, reason: error instanceof Error ? error.message : String(error) }, 'OIDC discovery failed; tokens from this issuer are refused until it succeeds');
      return undefined;
    }
  };
}

async function discover(issuer: string, discoveryUrl: URL): Promise<URL> {
  const response = await fetch(discoveryUrl, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`discovery answered HTTP ${response.status}`);
  const parsed = discoveryDocument.safeParse(JSON.parse(await boundedText(response, MAX_DISCOVERY_BYTES)));
  if (!parsed.success) throw new Error('the discovery document has no issuer or jwks_uri');
  if (parsed.data.issuer !== issuer) throw new Error(`the discovery document names issuer ${JSON.stringify(parsed.data.issuer)}, not the configured one`);
  return checkIdentifierUrl(parsed.data.jwks_uri, 'jwks_uri', (field, problem) => {
    throw new Error(`the discovery document's ${field} ${problem}`);
  });
}

async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new Error(`the discovery document is over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
