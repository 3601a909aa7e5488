/**
 * What route auth costs per request: each strategy admitting a valid credential, in process,
 * against `bearerTokens` (static tokens, the cheapest) in the same run; the median of five rounds
 * after one warm-up round.
 * OIDC runs against a local issuer (keys and JWKS cached after the first request, as in service).
 * Run: node bench/route-auth.ts [requests per round]
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SignJWT } from 'jose';
import { bearerTokens, httpBasic, jwtEcdsa, jwtHmac, oidc, silentLogger, type RouteAuth } from '@eve-flue/compat-server';
import { startOidcIssuer } from '../test/support/oidc-issuer.ts';
import { median } from './lib.ts';

const N = Number(process.argv[2] ?? 5_000);
const ROUNDS = 5;
const AUDIENCE = 'bench';
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const context = { mode: 'production' as const, logger: silentLogger };
const request = (authorization: string) => ({ headers: { authorization } }) as IncomingMessage;
const exp = () => Math.floor(Date.now() / 1000) + 600;
const signed = (alg: string, key: KeyObject | Uint8Array) => new SignJWT({ iss: 'https://backend.example.com', sub: 'svc', aud: AUDIENCE, exp: exp() }).setProtectedHeader({ alg }).sign(key);

/** Microseconds per admitted request, the median of the rounds. */
async function measure(strategy: RouteAuth, authorization: string): Promise<number> {
  const given = request(authorization);
  if (!(await strategy(given, context))) throw new Error('the credential was refused');
  const rounds: number[] = [];
  // Round 0 warms the code up and is not counted.
  for (let round = -1; round < ROUNDS; round++) {
    const started = performance.now();
    for (let i = 0; i < N; i++) await strategy(given, context);
    if (round >= 0) rounds.push(((performance.now() - started) * 1000) / N);
  }
  return median(rounds);
}

const issuer = await startOidcIssuer(AUDIENCE);
const ecdsa = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const token = 'a-static-token-of-some-length-0123456789';
const cases: [string, RouteAuth, string][] = [
  ['bearerTokens (baseline)', bearerTokens({ [token]: 'svc' }), `Bearer ${token}`],
  ['httpBasic', httpBasic({ username: 'ops', password: 'correct horse battery staple' }), `Basic ${Buffer.from('ops:correct horse battery staple').toString('base64')}`],
  ['jwtHmac HS256', jwtHmac({ algorithm: 'HS256', issuer: 'https://backend.example.com', audiences: [AUDIENCE], secret: SECRET }), `Bearer ${await signed('HS256', new TextEncoder().encode(SECRET))}`],
  ['jwtEcdsa ES256', jwtEcdsa({ algorithm: 'ES256', issuer: 'https://backend.example.com', audiences: [AUDIENCE], publicKey: ecdsa.publicKey.export({ type: 'spki', format: 'pem' }).toString() }), `Bearer ${await signed('ES256', ecdsa.privateKey)}`],
  ['oidc RS256 (local issuer)', oidc({ issuer: issuer.issuer, audiences: [AUDIENCE] }), `Bearer ${await issuer.token('alice')}`],
];
try {
  let baseline = 0;
  console.log(`route auth, ${N} admitted requests a round, median of ${ROUNDS} rounds`);
  for (const [name, strategy, authorization] of cases) {
    const micros = await measure(strategy, authorization);
    baseline ||= micros;
    console.log(`${name.padEnd(28)} ${micros.toFixed(1).padStart(8)} µs/request  ×${(micros / baseline).toFixed(1)}`);
  }
} finally {
  await issuer.close();
}
