import type * as ConnectModule from '@vercel/connect';
import type { ConnectTokenResponse, ConnectTokenSubject } from '@vercel/connect';
import type { FlueConnectionDefinition } from '../definition.ts';
import type { SignInBackend, TokenContext } from './backend.ts';
import { SignInError } from './backend.ts';
import type { SubjectKey, TokenSet } from './types.ts';

export type VercelConnectModule = typeof ConnectModule;

export interface VercelConnectBackendOptions {
  /** A Vercel token for Connect; otherwise `@vercel/oidc` finds one (`VERCEL_OIDC_TOKEN`, or the Vercel Functions request context). */
  vercelToken?: string;
  /** Told (once per distinct reason) when Connect cannot be used at all: package missing or no Vercel OIDC token. */
  onUnavailable?: (reason: string) => void;
  /** Loads `@vercel/connect`; replaceable in tests. Default: `import('@vercel/connect')`. */
  load?: () => Promise<VercelConnectModule>;
}

/** The issuer recorded on tokens that came from Vercel Connect. */
export const VERCEL_CONNECT_ISSUER = 'vercel-connect';

const UNAVAILABLE = 'Vercel Connect is not configured';

/**
 * Sign-in through Vercel Connect (`@vercel/connect`): Connect holds the OAuth client, PKCE,
 * `state`, the code exchange and the refresh token on its own servers; the bridge asks it for an
 * access token per subject and, when there is none, sends the browser to Connect's consent URL.
 * Connect returns the browser to the bridge's callback with only the bridge's own `state`
 * (placed in the return URL here), no OAuth `code`: hence `requiresCode = false`.
 *
 * The package is loaded lazily, so a missing package or a missing Vercel OIDC token fails the
 * sign-in with a SignInError ("Vercel Connect is not configured: …") and never crashes anything.
 */
export class VercelConnectBackend implements SignInBackend {
  readonly requiresCode = false;
  readonly #connector: string;
  readonly #vercelToken: string | undefined;
  readonly #onUnavailable: ((reason: string) => void) | undefined;
  readonly #load: () => Promise<VercelConnectModule>;
  readonly #reported = new Set<string>();
  #module: Promise<VercelConnectModule> | undefined;

  constructor(connection: Readonly<FlueConnectionDefinition>, options: VercelConnectBackendOptions = {}) {
    if (typeof connection.connector !== 'string' || connection.connector === '') {
      throw new Error(`[eve-flue] connection "${connection.name}" has no Vercel Connect connector`);
    }
    this.#connector = connection.connector;
    this.#vercelToken = options.vercelToken;
    this.#onUnavailable = options.onUnavailable;
    this.#load = options.load ?? (() => import('@vercel/connect'));
  }

  get connector(): string {
    return this.#connector;
  }

  /** The token Connect holds for the subject, or `undefined` when the user has not authorized. */
  async lookup(subject: SubjectKey): Promise<TokenSet | undefined> {
    return this.#token(subject, false);
  }

  async begin({ subject, redirectUri, state }: { subject: SubjectKey; redirectUri: string; state: string }) {
    const connect = await this.#connect();
    // Connect owns the OAuth state and adds nothing we can rely on: the bridge's state rides in the return URL.
    const callbackUrl = new URL(redirectUri);
    callbackUrl.searchParams.set('state', state);
    try {
      const result = await connect.startAuthorization(this.#connector, { subject: connectSubject(subject) }, { ...this.#auth(), callbackUrl: callbackUrl.href });
      if (typeof result?.url !== 'string' || !URL.canParse(result.url)) throw new SignInError('failed', 'Vercel Connect returned no authorization URL');
      return { authorizationUrl: result.url, data: { kind: 'vercel-connect' as const, connector: this.#connector } };
    } catch (error) {
      if (error instanceof Error && /^(Invalid callbackUrl|callbackUrl must be)/.test(error.message)) {
        // startAuthorization checks the callback URL locally; its message holds the URL (and so the state).
        throw new SignInError('failed', 'the bridge callback URL is not acceptable to Vercel Connect (it must be https, or http on localhost)');
      }
      throw this.#describe(error, connect);
    }
  }

  async finish({ subject }: { subject: SubjectKey }): Promise<TokenSet> {
    const tokens = await this.#token(subject, true);
    if (!tokens) throw new SignInError('declined', 'Vercel Connect has no authorization for this user');
    return tokens;
  }

  async refresh(_tokens: TokenSet, { subject }: TokenContext): Promise<TokenSet> {
    const refreshed = await this.#token(subject, true);
    if (!refreshed) throw new SignInError('failed', 'Vercel Connect no longer has an authorization for this user');
    return refreshed;
  }

  async revoke(_tokens: TokenSet, { subject }: TokenContext): Promise<boolean> {
    const connect = await this.#connect();
    try {
      await connect.revokeToken(this.#connector, { subject: connectSubject(subject) }, this.#auth());
      return true;
    } catch (error) {
      throw this.#describe(error, connect);
    }
  }

  /** `undefined` when Connect says the user has not authorized (or has no valid token). */
  async #token(subject: SubjectKey, forceRefresh: boolean): Promise<TokenSet | undefined> {
    const connect = await this.#connect();
    let response: ConnectTokenResponse;
    try {
      response = await connect.getTokenResponse(this.#connector, { subject: connectSubject(subject) }, { ...this.#auth(), ...(forceRefresh ? { forceRefresh } : {}) });
    } catch (error) {
      if (error instanceof connect.UserAuthorizationRequiredError || error instanceof connect.NoValidTokenError) return undefined;
      throw this.#describe(error, connect);
    }
    if (typeof response?.token !== 'string' || response.token === '') throw new SignInError('failed', 'Vercel Connect returned no token');
    return {
      accessToken: response.token,
      tokenType: 'bearer',
      ...(typeof response.expiresAt === 'number' && Number.isFinite(response.expiresAt) ? { expiresAt: response.expiresAt } : {}),
      issuer: VERCEL_CONNECT_ISSUER,
      clientId: this.#connector,
    };
  }

  #auth(): { vercelToken?: string } {
    return this.#vercelToken !== undefined ? { vercelToken: this.#vercelToken } : {};
  }


  async #connect(): Promise<VercelConnectModule> {
    this.#module ??= this.#load();
    try {
      return await this.#module;
    } catch {
      throw this.#unavailable('the @vercel/connect package could not be loaded');
    }
  }

  #unavailable(detail: string): SignInError {
    const reason = `${UNAVAILABLE}: ${detail}`;
    if (!this.#reported.has(reason)) {
      this.#reported.add(reason);
      try {
        this.#onUnavailable?.(reason);
      } catch {
        // A logger that throws must not turn a clean failure into a crash.
      }
    }
    return new SignInError('failed', reason);
  }

  /** A reason safe to show anyone: no tokens, no state, no upstream response bodies. */
  #describe(error: unknown, connect: VercelConnectModule): SignInError {
    if (error instanceof SignInError) return error;
    if (isUnavailable(error)) {
      return this.#unavailable('no Vercel OIDC token (set VERCEL_OIDC_TOKEN, run on Vercel, or configure a Vercel token)');
    }
    if (error instanceof connect.ConnectorInstallationRequiredError) {
      return new SignInError('failed', `the Vercel Connect connector is not installed: attach "${this.#connector}" to this project (vercel connect attach)`);
    }
    // Every refusal of the Connect API, whatever its subclass.
    if (error instanceof connect.ConnectError) {
      const { status, code } = error as { status?: unknown; code?: unknown };
      const parts = [
        typeof status === 'number' ? `HTTP ${status}` : undefined,
        typeof code === 'string' && /^[\w.-]{1,64}$/.test(code) ? code : undefined,
      ].filter((part) => part !== undefined);
      return new SignInError('failed', `Vercel Connect refused the request${parts.length ? ` (${parts.join(', ')})` : ''}`);
    }
    if (isNetworkError(error)) return new SignInError('failed', 'Vercel Connect could not be reached');
    return new SignInError('failed', 'Vercel Connect failed');
  }
}

function connectSubject(subject: SubjectKey): ConnectTokenSubject {
  return { type: 'user', id: subject };
}

/** `@vercel/oidc`'s error (Connect's own dependency, which exports no class of it): matched by name. */
function isUnavailable(error: unknown): boolean {
  return error instanceof Error && error.name === 'VercelOidcTokenError';
}

function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}
