import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import { SignJWT } from 'jose';
import { authenticate, bearerTokens, httpBasic, jwtEcdsa, jwtHmac, localDev, none, oidc, type RouteAuth } from '../src/index.ts';
import { silentLogger, type Logger } from '../src/logger.ts';

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const request = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;
const development = { mode: 'development' as const, logger: silentLogger };
const now = () => Math.floor(Date.now() / 1000);
const hmac = (claims: Record<string, unknown> = {}, alg = 'HS256', secret = SECRET) =>
  new SignJWT({ iss: 'https://backend.example.com', sub: 'billing', aud: 'bridge', exp: now() + 60, ...claims }).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));

describe('option checks name the strategy and the field, at load', () => {
  test.each([
    ['jwtHmac with a short secret', () => jwtHmac({ algorithm: 'HS256', issuer: 'x', audiences: ['bridge'], secret: 'short' }), 'jwtHmac(): `secret` must be at least 32 bytes for HS256'],
    ['jwtHmac with no audiences', () => jwtHmac({ algorithm: 'HS256', issuer: 'x', audiences: [], secret: SECRET }), 'jwtHmac(): `audiences` must be a non-empty array'],
    ['jwtHmac with alg none', () => jwtHmac({ algorithm: 'none' as never, issuer: 'x', audiences: ['a'], secret: SECRET }), 'jwtHmac(): `algorithm` must be "HS256"'],
    ['jwtHmac with a misspelt option', () => jwtHmac({ algorithm: 'HS256', issuer: 'x', audience: ['a'], audiences: ['a'], secret: SECRET } as never), 'jwtHmac(): `audience` is not an option'],
    [
      'jwtEcdsa with a key on another curve',
      () => jwtEcdsa({ algorithm: 'ES384', issuer: 'x', audiences: ['a'], publicKey: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString() }),
      'jwtEcdsa(): `publicKey` must be an EC key on the curve of ES384',
    ],
    ['jwtEcdsa with no key', () => jwtEcdsa({ algorithm: 'ES256', issuer: 'x', audiences: ['a'], publicKey: 'not a key' }), 'jwtEcdsa(): `publicKey` is not a public key'],
    ['oidc with a plain-http issuer off loopback', () => oidc({ issuer: 'http://login.example.com', audiences: ['a'] }), 'oidc(): `issuer` must be https (http only on a loopback host)'],
    ['oidc with a skew of an hour', () => oidc({ issuer: 'https://login.example.com', audiences: ['a'], clockSkewSeconds: 3600 }), 'oidc(): `clockSkewSeconds` must be'],
    ['httpBasic with a colon in the username', () => httpBasic({ username: 'a:b', password: 'p' }), 'httpBasic(): `username` may not contain ":"'],
  ])('%s', (_name, make, message) => {
    expect(make).toThrow(message);
  });
});

describe('jwtHmac', () => {
  const strategy = jwtHmac({ algorithm: 'HS256', issuer: 'https://backend.example.com', audiences: ['bridge'], secret: SECRET, subjects: ['bill*'], claims: { scope: ['agent'] } });

  test('admits a token signed with the secret, as Eve builds the principal', async () => {
    expect(await strategy(request(`Bearer ${await hmac({ scope: 'agent', email: 'b@example.com', n: 5 })}`), development)).toEqual({
      id: 'https://backend.example.com:billing',
      type: 'service',
      issuer: 'https://backend.example.com',
      subject: 'billing',
      attributes: { scope: 'agent', email: 'b@example.com' },
    });
  });

  test.each([
    ['another algorithm than the pinned one', () => hmac({ scope: 'agent' }, 'HS512', `${SECRET}${SECRET}`)],
    ['no exp', () => hmac({ scope: 'agent', exp: undefined })],
    ['a subject outside `subjects`', () => hmac({ scope: 'agent', sub: 'payroll' })],
    ['a claim outside `claims`', () => hmac({ scope: 'admin' })],
    ['another secret', () => hmac({ scope: 'agent' }, 'HS256', 'another-shared-secret-of-32-bytes!!')],
  ])('refuses %s', async (_name, token) => {
    expect(await strategy(request(`Bearer ${await token()}`), development)).toBeNull();
  });
});

test('localDev admits the local-dev principal in development only', async () => {
  expect(await localDev()(request(), development)).toEqual({ id: 'local-dev', type: 'local-dev', attributes: {} });
  expect(await localDev()(request(), { mode: 'production', logger: silentLogger })).toBeNull();
  expect(await none()(request(), { mode: 'production', logger: silentLogger })).toEqual({ id: 'anonymous', type: 'anonymous', attributes: {} });
});

describe('the walk', () => {
  test('the first principal wins; null moves on', async () => {
    const admission = await authenticate([() => null, bearerTokens({ 'token-of-sixteen-chars': 'ops' }), none()], request('Bearer token-of-sixteen-chars'), development);
    expect(admission).toEqual({ ok: true, principal: { id: 'ops', type: 'service' } });
  });

  test('challenges: one per scheme, Bearer for strategies that declare none', async () => {
    const custom: RouteAuth = () => null;
    expect(await authenticate([custom], request(), development)).toMatchObject({ ok: false, refusal: { challenges: ['Bearer'] } });
    expect(await authenticate(custom, request('Bearer x'), development)).toMatchObject({ ok: false, refusal: { challenges: ['Bearer error="invalid_token"'] } });
    const mixed = [jwtHmac({ algorithm: 'HS256', issuer: 'x', audiences: ['a'], secret: SECRET }), bearerTokens({ 'token-of-sixteen-chars': 'ops' }), httpBasic({ username: 'u', password: 'p' }, { realm: 'say "hi"' })];
    expect(await authenticate(mixed, request('Basic dTp3cm9uZw=='), development)).toMatchObject({ ok: false, refusal: { code: 'unauthorized', challenges: ['Bearer', 'Basic realm="say \\"hi\\"", charset="UTF-8"'] } });
  });
});

test('oidc refuses tokens when discovery names another issuer, and says so in the log', async () => {
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (_fields: unknown, message?: string) => void warnings.push(String(message)) } as Logger;
  const server = createServer((_request, response) => response.setHeader('content-type', 'application/json').end(JSON.stringify({ issuer: 'https://evil.example.com', jwks_uri: 'https://evil.example.com/jwks' })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const strategy = oidc({ issuer, audiences: ['bridge'] });
    expect(await strategy(request('Bearer a.b.c'), { mode: 'production', logger })).toBeNull();
    expect(warnings).toEqual([expect.stringContaining('OIDC discovery failed')]);
  } finally {
    server.close();
  }
});
