import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { ConnectionDefinitionError, defineFlueConnectionWithConnect } from '../src/definition.ts';
import { SignInError } from '../src/auth/backend.ts';
import { VercelConnectBackend } from '../src/auth/vercel-connect-backend.ts';

/**
 * A stand-in for the Vercel Connect API (https://api.vercel.com/v1/connect/...), answering with
 * the bodies `@vercel/connect` 2.3 reads: a token response, `{error:{code}}` for refusals (the
 * SDK maps `error.code`, not the status), the authorize response. Each subject has a state.
 */
type SubjectState = 'authorized' | 'consent' | 'no-token' | 'not-installed';

interface Recorded {
  method: string;
  url: string;
  authorization: string | null;
  body: Record<string, unknown> | undefined;
}

const CONNECTOR = 'linear/test-agent';
const VERCEL_TOKEN = 'test-vercel-token';
const REDIRECT_URI = 'https://bridge.example.com/eve/v1/oauth/callback';
const CONSENT_URL = 'https://connect.vercel.com/authorize?request=req_123';

const subjects = new Map<string, SubjectState>();
const issued = new Map<string, number>();
const requests: Recorded[] = [];
let installed = true;
const realFetch = globalThis.fetch;

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const refusal = (code: string, status: number): Response => json(status, { error: { code, message: `stub: ${code}` } });

async function connectApi(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const text = await request.text();
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  requests.push({ method: request.method, url: request.url, authorization: request.headers.get('authorization'), body });
  const url = new URL(request.url);
  if (url.origin !== 'https://api.vercel.com') throw new TypeError('fetch failed');
  if (request.headers.get('authorization') !== `Bearer ${VERCEL_TOKEN}`) return refusal('forbidden', 403);
  const subject = (body?.subject as { type?: string; id?: string } | undefined)?.id ?? '';
  const connector = encodeURIComponent(CONNECTOR);

  if (request.method === 'POST' && url.pathname === `/v1/connect/token/${connector}`) {
    if (!installed) return refusal('connector_installation_required', 403);
    const state = subjects.get(subject) ?? 'consent';
    if (state === 'consent') return refusal('user_authorization_required', 403);
    if (state === 'no-token') return refusal('no_token', 404);
    if (state === 'not-installed') return refusal('connector_installation_required', 403);
    const n = (issued.get(subject) ?? 0) + 1;
    issued.set(subject, n);
    return json(200, {
      token: `upstream-token-${subject}-${n}`,
      expiresAt: Date.now() + 3_600_000,
      tokenId: `tok_${n}`,
      connector: { id: 'conn_abc', uid: CONNECTOR, type: 'oauth' },
    });
  }
  if (request.method === 'POST' && url.pathname === `/v1/connect/authorize/${connector}`) {
    if (!installed) return refusal('connector_installation_required', 403);
    return json(200, {
      url: CONSENT_URL,
      request: 'req_123',
      verifier: 'verifier_123',
      expiresAt: Date.now() + 600_000,
      connector: { id: 'conn_abc', uid: CONNECTOR, type: 'oauth', service: 'linear', name: 'test-agent' },
    });
  }
  if (request.method === 'DELETE' && url.pathname === `/v1/connect/connectors/${connector}/tokens`) {
    subjects.set(subject, 'consent');
    return new Response(null, { status: 204 });
  }
  return refusal('not_found', 404);
}

const connection = defineFlueConnectionWithConnect({ name: 'linear', url: 'https://mcp.linear.app/mcp', connector: CONNECTOR });
let unavailable: string[];
const backend = (options: { vercelToken?: string } = { vercelToken: VERCEL_TOKEN }) =>
  new VercelConnectBackend(connection, { ...options, onUnavailable: (reason) => unavailable.push(reason) });

let counter = 0;
/** A fresh bridge subject per test: @vercel/connect caches tokens in process. */
const freshSubject = (): string => `principal:user-${++counter}-${Date.now()}`;

async function rejection(promise: Promise<unknown>): Promise<SignInError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SignInError);
  return error as SignInError;
}

beforeAll(() => {
  globalThis.fetch = connectApi as typeof fetch;
});

afterAll(() => {
  globalThis.fetch = realFetch;
});

beforeEach(() => {
  requests.length = 0;
  installed = true;
  unavailable = [];
});

describe('VercelConnectBackend against a stubbed Connect API', () => {
  test('lookup returns Connect’s token as a TokenSet, sent with the Vercel token', async () => {
    const subject = freshSubject();
    subjects.set(subject, 'authorized');
    const tokens = await backend().lookup(subject);
    expect(tokens).toMatchObject({
      accessToken: `upstream-token-${subject}-1`,
      tokenType: 'bearer',
      issuer: 'vercel-connect',
      clientId: CONNECTOR,
      expiresAt: expect.any(Number),
    });
    expect(tokens!.refreshToken).toBeUndefined();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      url: `https://api.vercel.com/v1/connect/token/${encodeURIComponent(CONNECTOR)}`,
      authorization: `Bearer ${VERCEL_TOKEN}`,
      body: { subject: { type: 'user', id: subject }, scopes: ['*'] },
    });
  });

  test('lookup for a user who has not consented (or has no token) is undefined', async () => {
    const subject = freshSubject();
    subjects.set(subject, 'consent');
    await expect(backend().lookup(subject)).resolves.toBeUndefined();
    const other = freshSubject();
    subjects.set(other, 'no-token');
    await expect(backend().lookup(other)).resolves.toBeUndefined();
    expect(requests).toHaveLength(2);
  });

  test('begin returns Connect’s consent URL and puts the bridge state in the return URL', async () => {
    const subject = freshSubject();
    const state = 'att_abc123.secret-part_XYZ';
    const started = await backend().begin({ subject, redirectUri: REDIRECT_URI, state });
    expect(started).toEqual({ authorizationUrl: CONSENT_URL, data: { kind: 'vercel-connect', connector: CONNECTOR } });
    expect(requests).toHaveLength(1);
    const [sent] = requests;
    expect(sent).toMatchObject({
      method: 'POST',
      url: `https://api.vercel.com/v1/connect/authorize/${encodeURIComponent(CONNECTOR)}`,
      authorization: `Bearer ${VERCEL_TOKEN}`,
      body: { subject: { type: 'user', id: subject }, scopes: ['*'] },
    });
    const returnUrl = new URL(String(sent!.body!.returnUrl));
    expect(`${returnUrl.origin}${returnUrl.pathname}`).toBe(REDIRECT_URI);
    expect(returnUrl.searchParams.get('state')).toBe(state);
    expect(new VercelConnectBackend(connection, {}).requiresCode).toBe(false);
  });

  test('finish after consent fetches a fresh token (bypassing the cache)', async () => {
    const subject = freshSubject();
    subjects.set(subject, 'authorized');
    const connect = backend();
    const first = await connect.lookup(subject);
    const finished = await connect.finish({ subject });
    expect(first!.accessToken).toBe(`upstream-token-${subject}-1`);
    expect(finished.accessToken).toBe(`upstream-token-${subject}-2`);
    expect(requests).toHaveLength(2);
  });

  test('finish while Connect still has no authorization is declined', async () => {
    const subject = freshSubject();
    subjects.set(subject, 'consent');
    const error = await rejection(backend().finish({ subject }));
    expect(error.outcome).toBe('declined');
    expect(error.message).toBe('Vercel Connect has no authorization for this user');
  });

  test('a connector that is not installed fails with a clear reason', async () => {
    installed = false;
    const subject = freshSubject();
    for (const attempt of [backend().begin({ subject, redirectUri: REDIRECT_URI, state: 'att_x.y' }), backend().lookup(subject), backend().finish({ subject })]) {
      const error = await rejection(attempt);
      expect(error.outcome).toBe('failed');
      expect(error.message).toMatch(/the Vercel Connect connector is not installed/);
      expect(error.message).toContain(CONNECTOR);
    }
    expect(unavailable).toEqual([]);
  });

  test('other Connect errors fail without leaking the response body', async () => {
    const subject = freshSubject();
    const error = await rejection(backend({ vercelToken: 'wrong-token' }).lookup(subject));
    expect(error.outcome).toBe('failed');
    expect(error.message).toBe('Vercel Connect refused the request (HTTP 403, forbidden)');
    expect(error.message).not.toContain('wrong-token');
  });

  test('refresh asks Connect again for the same subject', async () => {
    const subject = freshSubject();
    subjects.set(subject, 'authorized');
    const connect = backend();
    const tokens = (await connect.lookup(subject))!;
    const refreshed = await connect.refresh(tokens, { subject, redirectUri: REDIRECT_URI });
    expect(refreshed.accessToken).toBe(`upstream-token-${subject}-2`);
    subjects.set(subject, 'consent');
    const error = await rejection(connect.refresh(tokens, { subject, redirectUri: REDIRECT_URI }));
    expect(error.outcome).toBe('failed');
    expect(requests.map((r) => (r.body!.subject as { id: string }).id)).toEqual([subject, subject, subject]);
  });

  test('revoke deletes the subject’s tokens at Connect', async () => {
    const subject = freshSubject();
    subjects.set(subject, 'authorized');
    const connect = backend();
    const tokens = (await connect.lookup(subject))!;
    await connect.revoke(tokens, { subject, redirectUri: REDIRECT_URI });
    expect(requests[1]).toMatchObject({
      method: 'DELETE',
      url: `https://api.vercel.com/v1/connect/connectors/${encodeURIComponent(CONNECTOR)}/tokens`,
      authorization: `Bearer ${VERCEL_TOKEN}`,
      body: { subject: { type: 'user', id: subject } },
    });
    // revokeToken clears the SDK cache: the next lookup asks Connect, which now wants consent.
    await expect(connect.lookup(subject)).resolves.toBeUndefined();
  });

  test('a callback URL Connect would refuse fails without echoing the state', async () => {
    const error = await rejection(backend().begin({ subject: freshSubject(), redirectUri: 'http://bridge.internal/cb', state: 'att_q.secret-state' }));
    expect(error.message).toMatch(/callback URL/);
    expect(error.message).not.toContain('secret-state');
    expect(requests).toHaveLength(0);
  });
});

describe('Vercel Connect not configured', () => {
  let savedOidc: string | undefined;
  let savedCwd: string;

  beforeEach(() => {
    savedOidc = process.env.VERCEL_OIDC_TOKEN;
    delete process.env.VERCEL_OIDC_TOKEN;
    // @vercel/oidc looks for a `vc link`ed project upward from the working directory.
    savedCwd = process.cwd();
    process.chdir('/');
  });

  afterEach(() => {
    process.chdir(savedCwd);
    if (savedOidc !== undefined) process.env.VERCEL_OIDC_TOKEN = savedOidc;
  });

  test('with no Vercel token anywhere, lookup and begin reject with "not configured" and report it', async () => {
    const onUnavailable = jest.fn<(reason: string) => void>();
    const connect = new VercelConnectBackend(connection, { onUnavailable });
    const subject = freshSubject();
    for (const attempt of [connect.lookup(subject), connect.begin({ subject, redirectUri: REDIRECT_URI, state: 'att_a.b' }), connect.finish({ subject })]) {
      const error = await rejection(attempt);
      expect(error.outcome).toBe('failed');
      expect(error.message).toMatch(/^Vercel Connect is not configured: /);
    }
    expect(onUnavailable).toHaveBeenCalledTimes(1);
    expect(onUnavailable.mock.calls[0]![0]).toMatch(/^Vercel Connect is not configured: no Vercel OIDC token/);
    expect(requests).toHaveLength(0);
  });

  test('a package that cannot be loaded is "not configured" too', async () => {
    const onUnavailable = jest.fn<(reason: string) => void>();
    const connect = new VercelConnectBackend(connection, {
      vercelToken: VERCEL_TOKEN,
      onUnavailable,
      load: () => Promise.reject(Object.assign(new Error("Cannot find package '@vercel/connect'"), { code: 'ERR_MODULE_NOT_FOUND' })),
    });
    const error = await rejection(connect.lookup(freshSubject()));
    expect(error.message).toBe('Vercel Connect is not configured: the @vercel/connect package could not be loaded');
    await rejection(connect.begin({ subject: freshSubject(), redirectUri: REDIRECT_URI, state: 'att_a.b' }));
    expect(onUnavailable).toHaveBeenCalledTimes(1);
    expect(requests).toHaveLength(0);
  });
});

describe('defineFlueConnectionWithConnect', () => {
  test('accepts a <service>/<name> connector UID and freezes the definition', () => {
    expect(connection.connector).toBe(CONNECTOR);
    expect(Object.isFrozen(connection)).toBe(true);
  });

  test.each([[''], ['linear'], ['/name'], ['linear/'], ['linear/a/b'], ['linear/has space'], [42]])('rejects connector %p', (connector) => {
    expect(() => defineFlueConnectionWithConnect({ name: 'linear', url: 'https://mcp.linear.app/mcp', connector: connector as string })).toThrow(ConnectionDefinitionError);
  });

  test('still validates the rest of the definition', () => {
    expect(() => defineFlueConnectionWithConnect({ name: 'eve', url: 'https://mcp.linear.app/mcp', connector: CONNECTOR })).toThrow(/reserved by Eve/);
  });
});
