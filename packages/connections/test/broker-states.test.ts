/**
 * The sign-in broker's states, one flow at a time: pending → bound to one browser → finished
 * (single use), or cancelled, or expired. A stand-in backend and an in-memory store; a clock the
 * test moves.
 */
import { afterEach, expect, test } from '@jest/globals';
import { Sealer, SignInBroker, SignInError, SqliteAuthStore, type SignInBackend, type TokenSet } from '@eve-flue/connections';

const TOKENS: TokenSet = { accessToken: 'access-1', tokenType: 'bearer', issuer: 'https://as.example', clientId: 'client' };

let store: SqliteAuthStore;
let now = 1_000_000;

afterEach(async () => {
  await store.close();
});

function brokerWith(finish: SignInBackend['finish'] = async () => TOKENS) {
  store = new SqliteAuthStore(':memory:', Sealer.ephemeral());
  const backend: SignInBackend = {
    begin: async ({ state }) => ({ authorizationUrl: `https://as.example/authorize?state=${state}`, data: { kind: 'oauth2', verifier: 'v', issuer: 'https://as.example', clientId: 'client' } }),
    finish,
    refresh: async () => TOKENS,
    revoke: async () => false,
  };
  return new SignInBroker({ store, backends: new Map([['docs', backend]]), publicUrl: 'https://bridge.example', flowTtlMs: 60_000, now: () => now });
}

const request = { connection: 'docs', subject: 'principal:ann', sessionId: 'ses_1', turnId: 'turn_0', principalId: 'ann' };

/** The provider's redirect back, with the state the broker put in the authorization URL. */
async function callback(broker: SignInBroker, attemptId: string, query: Record<string, string> = { code: 'code-1' }): Promise<URL> {
  const flow = (await store.getFlow(attemptId))!;
  const url = new URL(broker.redirectUri);
  url.search = new URLSearchParams({ ...query, state: new URL(flow.authorizationUrl).searchParams.get('state')! }).toString();
  return url;
}

test('pending, bound to the first browser, finished once: the turn hears authorized and the token is kept', async () => {
  const broker = brokerWith();
  const attempt = await broker.begin(request);
  expect(await broker.begin(request)).toBe(attempt);
  expect(attempt.startUrl).toBe(`https://bridge.example/eve/v1/oauth/start/${attempt.id}`);

  const first = await broker.bindBrowser(attempt.id, () => undefined);
  if (first.kind !== 'bound' || first.bindingSecret === undefined) throw new Error('the first browser should own the flow');
  const cookie = first.bindingSecret;
  expect(await broker.bindBrowser(attempt.id, () => undefined)).toEqual({ kind: 'refused', code: 'sign_in_taken' });
  // The same browser again: sent on, with no new secret.
  const again = await broker.bindBrowser(attempt.id, () => cookie);
  expect(again.kind).toBe('bound');
  expect(again).not.toHaveProperty('bindingSecret');

  const url = await callback(broker, attempt.id);
  expect(await broker.complete(url, () => undefined)).toMatchObject({ kind: 'refused', code: 'invalid_request' });
  expect(await broker.complete(url, () => cookie)).toEqual({ kind: 'finished', flowId: attempt.id, connection: 'docs', outcome: { outcome: 'authorized' } });
  expect(await attempt.outcome).toEqual({ outcome: 'authorized' });
  expect(await broker.token('docs', 'principal:ann')).toBe('access-1');
  expect(await broker.complete(url, () => cookie)).toMatchObject({ kind: 'refused', code: 'invalid_request' });
});

test('a state whose secret does not match changes nothing', async () => {
  const broker = brokerWith();
  const attempt = await broker.begin(request);
  const bound = await broker.bindBrowser(attempt.id, () => undefined);
  const url = await callback(broker, attempt.id);
  url.searchParams.set('state', `${attempt.id}.not-the-secret`);
  expect(await broker.complete(url, () => (bound.kind === 'bound' ? bound.bindingSecret : undefined))).toMatchObject({ kind: 'refused', code: 'invalid_request' });
  expect(await store.getFlow(attempt.id)).toBeDefined();
});

test('a provider that declines settles the turn as declined', async () => {
  const broker = brokerWith(async () => {
    throw new SignInError('declined', 'the person said no');
  });
  const attempt = await broker.begin(request);
  const bound = await broker.bindBrowser(attempt.id, () => undefined);
  const cookie = bound.kind === 'bound' ? bound.bindingSecret : undefined;
  expect(await broker.complete(await callback(broker, attempt.id), () => cookie)).toMatchObject({ kind: 'finished', outcome: { outcome: 'declined' } });
  expect(await attempt.outcome).toMatchObject({ outcome: 'declined' });
});

test('cancelled from the bridge side: the flow is gone and the turn hears why', async () => {
  const broker = brokerWith();
  const attempt = await broker.begin(request);
  await broker.cancel(attempt.id, { outcome: 'declined', reason: 'the person sent another message' });
  expect(await attempt.outcome).toEqual({ outcome: 'declined', reason: 'the person sent another message' });
  expect(await broker.bindBrowser(attempt.id, () => undefined)).toEqual({ kind: 'refused', code: 'not_found' });
});

test('an expired flow is refused at its start link and at its callback', async () => {
  const broker = brokerWith();
  const attempt = await broker.begin(request);
  const bound = await broker.bindBrowser(attempt.id, () => undefined);
  const cookie = bound.kind === 'bound' ? bound.bindingSecret : undefined;
  const url = await callback(broker, attempt.id);
  now += 60_001;
  expect(await broker.bindBrowser(attempt.id, () => cookie)).toEqual({ kind: 'refused', code: 'not_found' });
  expect(await broker.complete(url, () => cookie)).toMatchObject({ kind: 'refused', code: 'invalid_request', message: expect.stringMatching(/expired/) });
});
