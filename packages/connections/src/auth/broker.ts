import { nanoid } from 'nanoid';
import { BRIDGE_ROUTES, EVE_BASE_PATH, routePath } from '@eve-flue/eve-protocol';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { SignInBackend, UpstreamChallenge } from './backend.ts';
import { SignInError } from './backend.ts';
import { matchesHash, randomSecret, sha256 } from './secrets.ts';
import type { AuthStore } from './store.ts';
import type { PendingFlow, SignInEvents, SignInOutcome, SubjectKey, TokenSet } from './types.ts';

export interface BrokerOptions {
  store: AuthStore;
  /** The backend of each OAuth connection, by connection name. */
  backends: ReadonlyMap<string, SignInBackend>;
  /** The bridge's public origin: links and the redirect URI are built from it, never from a request. */
  publicUrl: string;
  /** How long a sign-in may take. Default 10 minutes. */
  flowTtlMs?: number;
  /** Carries a sign-in's end to the other instances (one of them may hold the parked turn). */
  events?: SignInEvents;
  now?: () => number;
}

/** A sign-in in progress, as the parked turn sees it. */
export interface SignInAttempt {
  id: string;
  connection: string;
  /** The bridge URL a person opens: it binds their browser, then redirects to the provider. */
  startUrl: string;
  expiresAt: number;
  outcome: Promise<SignInOutcome>;
}

export type CallbackResult =
  | { kind: 'refused'; code: 'invalid_request'; message: string }
  | { kind: 'finished'; flowId: string; connection: string; outcome: SignInOutcome };

/**
 * What opening a start link leads to: on to the provider (with a new binding secret for a browser
 * that just took the flow), or a refusal: `not_found` no such live flow, `sign_in_taken` another
 * browser owns it. Error codes of the `ERRORS` table: the routes give them their status.
 */
export type StartResult =
  | { kind: 'bound'; authorizationUrl: string; maxAgeSeconds: number; bindingSecret?: string }
  | { kind: 'refused'; code: 'not_found' | 'sign_in_taken' };

const CALLBACK_PATH = `${EVE_BASE_PATH}${BRIDGE_ROUTES.oauthCallback}`;
/** The cookie that binds a flow to the browser that opened its start URL (RFC 9700 §2.1). */
export const bindingCookieName = (flowId: string): string => `eve_oauth_${flowId}`;

/** How soon before expiry a token is refreshed instead of used. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * Runs sign-ins for connections: keeps tokens (server side), opens single-use flows whose
 * `state` is a flow id plus 256 random bits, finishes them at the callback, and tells the parked
 * turn how it went. A flow records the connection and the subject its token will belong to
 * (principal, or session for an anonymous caller); its outcome goes only to the turn that opened
 * it; and it is bound to the browser that opened its start link.
 */
export class SignInBroker {
  readonly #store: AuthStore;
  readonly #backends: ReadonlyMap<string, SignInBackend>;
  readonly #publicUrl: string;
  readonly #flowTtlMs: number;
  readonly #now: () => number;
  readonly #waiting = new Map<string, { settle: (outcome: SignInOutcome) => void; attempt: SignInAttempt; key: string }>();
  readonly #byKey = new Map<string, Promise<SignInAttempt>>();
  readonly #events: SignInEvents | undefined;
  readonly #refreshing = new Map<string, Promise<TokenSet | undefined>>();

  constructor(options: BrokerOptions) {
    this.#events = options.events;
    this.#events?.subscribe((flowId, outcome) => this.#settle(flowId, outcome));
    this.#store = options.store;
    this.#backends = options.backends;
    this.#publicUrl = options.publicUrl.replace(/\/+$/, '');
    this.#flowTtlMs = options.flowTtlMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  get redirectUri(): string {
    return `${this.#publicUrl}${CALLBACK_PATH}`;
  }

  get flowTtlMs(): number {
    return this.#flowTtlMs;
  }

  handles(connection: string): boolean {
    return this.#backends.has(connection);
  }

  /**
   * The access token to send for this subject now, refreshed first when it is about to expire.
   * With `audience` (the resource the request goes to), a token issued for another resource
   * (RFC 8707), e.g. one kept from before the connection's URL changed, is not sent.
   */
  async token(connection: string, subject: SubjectKey, audience?: string): Promise<string | undefined> {
    const backend = this.#backend(connection);
    const tokens = (await this.#store.getToken(subject, connection)) ?? (await backend.lookup?.(subject));
    if (!tokens) return undefined;
    if (audience && tokens.resource && !checkResourceAllowed({ requestedResource: audience, configuredResource: tokens.resource })) return undefined;
    if (tokens.expiresAt === undefined || tokens.expiresAt - REFRESH_MARGIN_MS > this.#now()) return tokens.accessToken;
    return (await this.#refresh(connection, subject, tokens))?.accessToken;
  }

  /** The server refused `rejected`: refresh once if possible, else forget the token. */
  async afterRejection(connection: string, subject: SubjectKey, rejected: string): Promise<string | undefined> {
    const tokens = await this.#store.getToken(subject, connection);
    if (!tokens || tokens.accessToken !== rejected) return tokens?.accessToken;
    return (await this.#refresh(connection, subject, tokens))?.accessToken;
  }

  /** Starts a sign-in, or joins the one already pending for this subject, connection and session. */
  async begin(request: {
    connection: string;
    subject: SubjectKey;
    sessionId: string;
    turnId: string;
    principalId?: string;
    challenge?: UpstreamChallenge;
  }): Promise<SignInAttempt> {
    const key = `${request.subject}\u0000${request.connection}\u0000${request.sessionId}`;
    // Parallel calls that meet the same 401 share one sign-in, even while it is being opened.
    let pending = this.#byKey.get(key);
    if (!pending) {
      pending = this.#open(key, request);
      this.#byKey.set(key, pending);
      pending.catch(() => this.#byKey.delete(key));
    }
    return pending;
  }

  async #open(
    key: string,
    request: { connection: string; subject: SubjectKey; sessionId: string; turnId: string; principalId?: string; challenge?: UpstreamChallenge },
  ): Promise<SignInAttempt> {
    const id = `att_${nanoid()}`;
    const secret = randomSecret();
    const state = `${id}.${secret}`;
    const { authorizationUrl, data } = await this.#backend(request.connection).begin({
      subject: request.subject,
      redirectUri: this.redirectUri,
      state,
      ...(request.challenge ? { challenge: request.challenge } : {}),
    });
    const createdAt = this.#now();
    const flow: PendingFlow = {
      id,
      secretHash: sha256(secret),
      connection: request.connection,
      subject: request.subject,
      authorizationUrl,
      redirectUri: this.redirectUri,
      backend: data,
      createdAt,
      expiresAt: createdAt + this.#flowTtlMs,
    };
    await this.#store.putFlow(flow);
    let settle!: (outcome: SignInOutcome) => void;
    const outcome = new Promise<SignInOutcome>((resolve) => (settle = resolve));
    const attempt: SignInAttempt = { id, connection: request.connection, startUrl: `${this.#publicUrl}${EVE_BASE_PATH}${routePath(BRIDGE_ROUTES.oauthStart, { attempt: id })}`, expiresAt: flow.expiresAt, outcome };
    const timer = setTimeout(() => this.#settle(id, { outcome: 'timed-out', reason: 'the sign-in was not finished in time' }), this.#flowTtlMs);
    timer.unref();
    this.#waiting.set(id, {
      attempt,
      key,
      settle: (result) => {
        clearTimeout(timer);
        settle(result);
      },
    });
    return attempt;
  }

  /**
   * The start URL was opened. The first browser to open it owns the flow: it gets a binding
   * secret (its hash kept in the flow, the secret in an HttpOnly cookie) and the provider URL.
   * The same browser opening it again (it carries the cookie) is sent on again; any other
   * browser is refused and changes nothing.
   */
  async bindBrowser(flowId: string, bindingSecretOf: (flowId: string) => string | undefined): Promise<StartResult> {
    const flow = await this.#store.getFlow(flowId);
    if (!flow || flow.expiresAt <= this.#now()) return { kind: 'refused', code: 'not_found' };
    const onward = { authorizationUrl: flow.authorizationUrl, maxAgeSeconds: Math.ceil((flow.expiresAt - this.#now()) / 1000) };
    if (flow.bindingHash) {
      const presented = bindingSecretOf(flowId);
      return presented !== undefined && matchesHash(presented, flow.bindingHash) ? { kind: 'bound', ...onward } : { kind: 'refused', code: 'sign_in_taken' };
    }
    const bindingSecret = randomSecret();
    const binding = await this.#store.bindFlow(flowId, sha256(bindingSecret));
    if (binding === 'gone') return { kind: 'refused', code: 'not_found' };
    if (binding === 'owned') return { kind: 'refused', code: 'sign_in_taken' };
    return { kind: 'bound', bindingSecret, ...onward };
  }

  /**
   * The provider sent the browser back. Refuses (`invalid_request`, nothing changed) unless `state` names a
   * live flow, its secret matches, and the browser carries the flow's binding cookie; then takes
   * the flow (single use) before exchanging the code.
   */
  async complete(callbackUrl: URL, bindingSecretOf: (flowId: string) => string | undefined): Promise<CallbackResult> {
    const state = callbackUrl.searchParams.get('state') ?? '';
    const [flowId = '', secret = ''] = state.split('.');
    const flow = flowId && secret ? await this.#store.getFlow(flowId) : undefined;
    if (!flow || !matchesHash(secret, flow.secretHash)) return { kind: 'refused', code: 'invalid_request', message: 'This sign-in link is not valid.' };
    const binding = bindingSecretOf(flowId);
    if (!flow.bindingHash || binding === undefined || !matchesHash(binding, flow.bindingHash)) {
      return { kind: 'refused', code: 'invalid_request', message: 'This sign-in was started in another browser. Open the sign-in link again from your app.' };
    }
    if (flow.expiresAt <= this.#now()) {
      await this.#store.takeFlow(flowId);
      return { kind: 'refused', code: 'invalid_request', message: 'This sign-in has expired. Ask again from your app.' };
    }
    const error = callbackUrl.searchParams.get('error');
    const needsCode = this.#backend(flow.connection).requiresCode !== false;
    if (needsCode && !error && !callbackUrl.searchParams.get('code')) return { kind: 'refused', code: 'invalid_request', message: 'The provider sent no authorization code.' };
    // Single use: whoever takes the flow first finishes it; a replay finds nothing.
    const taken = await this.#store.takeFlow(flowId);
    if (!taken) return { kind: 'refused', code: 'invalid_request', message: 'This sign-in link is not valid.' };
    const outcome = await this.#finish(taken, callbackUrl, state);
    this.#settle(flowId, outcome);
    await this.#events?.publish(flowId, outcome);
    return { kind: 'finished', flowId, connection: taken.connection, outcome };
  }

  /** Ends a pending sign-in from the bridge's side (the person moved on, the turn was cancelled). */
  async cancel(attemptId: string, outcome: Exclude<SignInOutcome, { outcome: 'authorized' }>): Promise<void> {
    await this.#store.takeFlow(attemptId);
    this.#settle(attemptId, outcome);
    await this.#events?.publish(attemptId, outcome);
  }

  /**
   * Signs a subject out of a connection: forgets the token, then revokes it at the provider where
   * it can. A provider that cannot be reached does not keep the token here.
   */
  async signOut(connection: string, subject: SubjectKey): Promise<{ signedOut: boolean; revoked: boolean }> {
    const tokens = await this.#store.getToken(subject, connection);
    if (!tokens) return { signedOut: false, revoked: false };
    await this.#store.deleteToken(subject, connection);
    try {
      return { signedOut: true, revoked: await this.#backend(connection).revoke(tokens, { subject, redirectUri: this.redirectUri }) };
    } catch {
      return { signedOut: true, revoked: false };
    }
  }

  async #finish(flow: PendingFlow, callbackUrl: URL, state: string): Promise<SignInOutcome> {
    try {
      const tokens = await this.#backend(flow.connection).finish({
        subject: flow.subject,
        callbackUrl,
        state,
        data: flow.backend,
        redirectUri: flow.redirectUri,
      });
      await this.#store.putToken(flow.subject, flow.connection, tokens);
      return { outcome: 'authorized' };
    } catch (error) {
      const failure = error instanceof SignInError ? error : new SignInError('failed', 'the sign-in could not be finished');
      return { outcome: failure.outcome, reason: failure.message };
    }
  }

  /** Concurrent callers share one refresh: a second one with a rotated refresh token would fail. */
  #refresh(connection: string, subject: SubjectKey, tokens: TokenSet): Promise<TokenSet | undefined> {
    const key = `${subject}\u0000${connection}`;
    let refreshing = this.#refreshing.get(key);
    if (!refreshing) {
      refreshing = this.#refreshOnce(connection, subject, tokens).finally(() => this.#refreshing.delete(key));
      this.#refreshing.set(key, refreshing);
    }
    return refreshing;
  }

  async #refreshOnce(connection: string, subject: SubjectKey, tokens: TokenSet): Promise<TokenSet | undefined> {
    const backend = this.#backend(connection);
    // A backend that holds tokens itself (Connect) refreshes without a refresh token here.
    if (!tokens.refreshToken && !backend.lookup) {
      await this.#store.deleteToken(subject, connection);
      return undefined;
    }
    try {
      const refreshed = await backend.refresh(tokens, { subject, redirectUri: this.redirectUri });
      await this.#store.putToken(subject, connection, refreshed);
      return refreshed;
    } catch {
      await this.#store.deleteToken(subject, connection);
      return undefined;
    }
  }

  #settle(flowId: string, outcome: SignInOutcome): void {
    const waiting = this.#waiting.get(flowId);
    if (!waiting) return;
    this.#waiting.delete(flowId);
    this.#byKey.delete(waiting.key);
    waiting.settle(outcome);
  }

  #backend(connection: string): SignInBackend {
    const backend = this.#backends.get(connection);
    if (!backend) throw new Error(`[eve-flue] connection "${connection}" has no sign-in`);
    return backend;
  }
}
