import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { base64url, generateKeyPair, SignJWT } from 'jose';
import { Client, ClientError } from 'eve/client';
import { ForbiddenError, httpBasic, jwtEcdsa, oidc, type RouteAuth } from '@eve-flue/bridge';
import { defineFlueConnection } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { startOidcIssuer, type OidcIssuer } from './support/oidc-issuer.ts';
import { startWhoamiServer, type WhoamiServer } from './support/whoami-server.ts';

const AUDIENCE = 'eve-flue-bridge';
const ECDSA_ISSUER = 'https://backend.example.com';
const WHOAMI = '/tool connection__who__whoami {}';
/** Written composed (NFC): `é` is one code point here. */
const PASSWORD = 'correct horse battery stapl\u00e9';

let issuer: OidcIssuer;
let whoami: WhoamiServer;
let bridge: DemoBridge;
let dataDir: string;
const ecdsa = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/** Throws when the request says so: a strategy that refuses outright, ahead of the others. */
const gatekeeper: RouteAuth = (request) => {
  if (request.headers['x-test-gate'] === 'explode') throw new Error('the directory is down');
  if (request.headers['x-test-gate'] === 'forbid') throw new ForbiddenError({ message: 'Not on this workspace.' });
  return null;
};

beforeAll(async () => {
  issuer = await startOidcIssuer(AUDIENCE);
  whoami = await startWhoamiServer();
  dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-route-auth-'));
  bridge = await startDemoBridge({
    dataDir,
    auth: [
      gatekeeper,
      oidc({ issuer: issuer.issuer, audiences: [AUDIENCE] }),
      jwtEcdsa({ algorithm: 'ES256', issuer: ECDSA_ISSUER, audiences: [AUDIENCE], publicKey: ecdsa.publicKey.export({ type: 'spki', format: 'pem' }).toString() }),
      httpBasic({ username: 'operator', password: PASSWORD }, { realm: 'agents' }),
    ],
    connections: [
      defineFlueConnection({
        name: 'who',
        url: whoami.url,
        tools: ['whoami'],
        // Per caller: the id keeps working as before, `auth` is the whole principal.
        auth: { type: 'bearer', token: (ctx) => (ctx.auth ? `${ctx.principal}|${ctx.auth.type}|${String(ctx.auth.attributes?.email)}` : 'nobody') },
      }),
    ],
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await whoami?.close();
  await issuer?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function sessionCount(): number {
  const db = new DatabaseSync(join(dataDir, 'journal.db'), { readOnly: true });
  try {
    return Number((db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n);
  } finally {
    db.close();
  }
}

/** A create through the real client: its reply, or the status it was refused with. */
async function whoamiAs(auth: ConstructorParameters<typeof Client>[0]['auth'], headers: Record<string, string> = {}): Promise<string | number> {
  const client = new Client({ host: bridge.url, ...(auth ? { auth } : {}), headers });
  try {
    const { response } = await client.sessions.create({ message: WHOAMI });
    return (await response!.result()).message ?? '';
  } catch (error) {
    if (error instanceof ClientError) return error.status;
    throw error;
  }
}

/** The raw answer to a create: status, every header line as sent, body. */
function rawCreate(headers: Record<string, string>): Promise<{ status: number; headers: [string, string][]; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${bridge.url}/eve/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) pairs.push([response.rawHeaders[i]!.toLowerCase(), response.rawHeaders[i + 1]!]);
        resolve({ status: response.statusCode!, headers: pairs, body: JSON.parse(Buffer.concat(chunks).toString()) });
      });
    });
    request.on('error', reject);
    request.end(JSON.stringify({ message: WHOAMI }));
  });
}

const challenges = (headers: [string, string][]) => headers.filter(([name]) => name === 'www-authenticate').map(([, value]) => value);
const now = () => Math.floor(Date.now() / 1000);

describe('oidc()', () => {
  test('a valid token admits the caller, and its principal reaches the per-caller connection credential', async () => {
    const before = sessionCount();
    const token = await issuer.token('alice', { email: 'alice@example.com' });
    expect(await whoamiAs({ bearer: token })).toBe(`Tool connection__who__whoami returned: Bearer ${issuer.issuer}:alice|service|alice@example.com`);
    expect(sessionCount()).toBe(before + 1);
  });

  test('refused with 401 and nothing created: no token, expired, nbf ahead, wrong aud or iss, alg none, HS256 with the public key, unknown kid, another key, garbage', async () => {
    const { kid, publicPem } = await issuer.current();
    const attacker = await generateKeyPair('RS256');
    const claims = { iss: issuer.issuer, sub: 'mallory', aud: AUDIENCE, exp: now() + 300 };
    const unsigned = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(claims))}.`;
    const confused = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(new TextEncoder().encode(publicPem));
    const refused = {
      expired: await issuer.token('mallory', { exp: now() - 120, iat: now() - 600 }),
      'nbf ahead': await issuer.token('mallory', { nbf: now() + 300 }),
      'wrong aud': await issuer.token('mallory', { aud: 'another-service' }),
      'wrong iss': await issuer.token('mallory', { iss: 'https://login.example.com' }),
      'alg none': unsigned,
      'HS256 signed with the RSA public key': confused,
      'unknown kid': await issuer.token('mallory', {}, { kid: 'not-in-the-jwks', key: attacker.privateKey }),
      'right kid, another key': await issuer.token('mallory', {}, { key: attacker.privateKey }),
      garbage: 'eyJhbGciOi.not-a-jwt.at-all',
    };
    const before = sessionCount();
    const calls = whoami.calls.length;
    expect(await whoamiAs(undefined)).toBe(401);
    for (const [name, token] of Object.entries(refused)) {
      const answer = await rawCreate({ authorization: `Bearer ${token}` });
      expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 401, body: { ok: false, code: 'unauthorized', error: expect.any(String) } });
      expect(challenges(answer.headers)).toEqual(['Bearer error="invalid_token"', 'Basic realm="agents", charset="UTF-8"']);
      expect(answer.headers).toContainEqual(['cache-control', 'no-store']);
    }
    expect(sessionCount()).toBe(before);
    expect(whoami.calls.length).toBe(calls);
  });

  test('no credentials at all: one challenge per scheme, no invalid_token', async () => {
    const answer = await rawCreate({});
    expect(answer.status).toBe(401);
    expect(challenges(answer.headers)).toEqual(['Bearer', 'Basic realm="agents", charset="UTF-8"']);
  });

  test('a burst of unknown kids refetches the JWKS at most once, not once per token', async () => {
    const stranger = await generateKeyPair('RS256');
    const tokens = await Promise.all(Array.from({ length: 10 }, () => issuer.token('mallory', {}, { kid: randomUUID(), key: stranger.privateKey })));
    const before = issuer.jwksFetches();
    const statuses = await Promise.all(tokens.map(async (token) => (await rawCreate({ authorization: `Bearer ${token}` })).status));
    expect(statuses).toEqual(Array(10).fill(401));
    expect(issuer.jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  test('a rotated key is picked up without a restart; the retired key is refused', async () => {
    const retired = await issuer.token('alice', { email: 'alice@example.com' });
    await issuer.rotate();
    const rotated = await issuer.token('alice', { email: 'alice@example.com' });
    // The JWKS is refetched for the new kid once the refetch cooldown allows: until then it is refused.
    const deadline = Date.now() + 30_000;
    let answer = await whoamiAs({ bearer: rotated });
    while (answer === 401 && Date.now() < deadline) answer = await whoamiAs({ bearer: rotated });
    expect(answer).toBe(`Tool connection__who__whoami returned: Bearer ${issuer.issuer}:alice|service|alice@example.com`);
    expect(await whoamiAs({ bearer: retired })).toBe(401);
  }, 60_000);
});

describe('jwtEcdsa() and httpBasic()', () => {
  const sign = (key: Parameters<SignJWT['sign']>[0], claims: Record<string, unknown> = {}, alg = 'ES256') =>
    new SignJWT({ iss: ECDSA_ISSUER, sub: 'billing', aud: AUDIENCE, exp: now() + 300, ...claims }).setProtectedHeader({ alg }).sign(key);

  test('jwtEcdsa admits a token signed with the configured key, as <iss>:<sub>', async () => {
    expect(await whoamiAs({ bearer: await sign(ecdsa.privateKey) })).toBe(`Tool connection__who__whoami returned: Bearer ${ECDSA_ISSUER}:billing|service|undefined`);
  });

  test('jwtEcdsa refuses another key, another issuer, and HS256 signed with its public key', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const publicPem = ecdsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const before = sessionCount();
    for (const token of [await sign(other.privateKey), await sign(ecdsa.privateKey, { iss: 'https://elsewhere.example.com' }), await sign(new TextEncoder().encode(publicPem), {}, 'HS256')]) {
      expect(await whoamiAs({ bearer: token })).toBe(401);
    }
    expect(sessionCount()).toBe(before);
  });

  test('httpBasic admits the operator (NFC-equal spellings too) and refuses a wrong password', async () => {
    const admitted = 'Tool connection__who__whoami returned: Bearer operator|user|undefined';
    expect(await whoamiAs({ basic: { username: 'operator', password: PASSWORD } })).toBe(admitted);
    // The same password decomposed (NFD: `e` + combining acute), as another keyboard may send it.
    expect(await whoamiAs({ basic: { username: 'operator', password: 'correct horse battery staple\u0301' } })).toBe(admitted);
    expect(await whoamiAs({ basic: { username: 'operator', password: 'correct horse battery staple' } })).toBe(401);
    expect(await whoamiAs({ basic: { username: 'Operator', password: PASSWORD } })).toBe(401);
  });
});

describe('a strategy that throws', () => {
  test('refuses the request rather than letting a later strategy admit it', async () => {
    const basic = { basic: { username: 'operator', password: PASSWORD } } as const;
    const before = sessionCount();
    expect(await whoamiAs(basic, { 'x-test-gate': 'explode' })).toBe(401);
    expect(await whoamiAs(basic, { 'x-test-gate': 'forbid' })).toBe(403);
    const forbidden = await rawCreate({ 'x-test-gate': 'forbid' });
    expect(forbidden.body).toEqual({ ok: false, code: 'forbidden', error: 'Not on this workspace.' });
    expect(challenges(forbidden.headers)).toEqual([]);
    expect(sessionCount()).toBe(before);
  });
});
