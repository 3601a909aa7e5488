import * as oauth from 'openid-client';
import { isLoopbackHostname } from '@eve-flue/eve-protocol';
import { discoverAuthorizationServerMetadata, discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { FlueConnectionDefinition, OAuth2Settings } from '../definition.ts';
import type { SignInBackend, TokenContext, UpstreamChallenge } from './backend.ts';
import { SignInError } from './backend.ts';
import { guardedFetch } from './outbound-guard.ts';
import type { AuthStore } from './store.ts';
import type { FlowData, TokenSet } from './types.ts';

/** Plain http is allowed for loopback hosts only (local development and tests). */
function isLoopbackHttp(url: string): boolean {
  const parsed = new URL(url);
  return parsed.protocol === 'http:' && isLoopbackHostname(parsed.hostname);
}

function assertSafeUrl(url: string, what: string): void {
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && !isLoopbackHttp(url)) throw new SignInError('failed', `${what} must use https: ${parsed.origin}`);
}

const allowLoopback = (url: string) => (isLoopbackHttp(url) ? { execute: [oauth.allowInsecureRequests] } : {});

/**
 * OAuth 2.0 authorization code flow with PKCE (S256) through openid-client. The server comes from
 * explicit endpoints, an issuer (OIDC, then RFC 8414 discovery), or the MCP server's own 401
 * (RFC 9728 protected-resource metadata); the client from the definition or, failing that,
 * dynamic registration (RFC 7591), remembered per server and redirect URI.
 */
export class OAuth2Backend implements SignInBackend {
  readonly #connection: Readonly<FlueConnectionDefinition>;
  readonly #auth: Readonly<OAuth2Settings>;
  readonly #store: AuthStore;
  readonly #configurations = new Map<string, Promise<oauth.Configuration>>();
  /** Every sign-in request goes through it: no private-network address unless allowed. */
  readonly #fetch: typeof fetch;

  constructor(connection: Readonly<FlueConnectionDefinition>, store: AuthStore) {
    if (connection.auth?.type !== 'oauth2') throw new Error(`[eve-flue] connection "${connection.name}" has no OAuth settings`);
    this.#connection = connection;
    this.#auth = connection.auth;
    this.#store = store;
    this.#fetch = guardedFetch({ connectionUrl: connection.url, allowPrivateNetwork: connection.auth.allowPrivateNetwork === true });
  }

  async begin({ redirectUri, state, challenge }: { redirectUri: string; state: string; challenge?: UpstreamChallenge }) {
    const server = await this.#discover(challenge);
    const client = await this.#client(server.metadata, redirectUri);
    const configuration = await this.#configuration(server.metadata, client);
    const verifier = oauth.randomPKCECodeVerifier();
    const parameters: Record<string, string> = {
      redirect_uri: redirectUri,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    if (server.scope) parameters.scope = server.scope;
    if (server.resource) parameters.resource = server.resource;
    return {
      authorizationUrl: oauth.buildAuthorizationUrl(configuration, parameters).href,
      data: { kind: 'oauth2' as const, verifier, issuer: server.metadata.issuer, clientId: client.clientId, ...(server.resource ? { resource: server.resource } : {}) },
    };
  }

  async finish({ callbackUrl, state, data, redirectUri }: { callbackUrl: URL; state: string; data: FlowData; redirectUri: string }) {
    if (data.kind !== 'oauth2') throw new SignInError('failed', 'the sign-in was started for another kind of backend');
    const configuration = await this.#configurationFor(data.issuer, data.clientId, redirectUri);
    // openid-client derives the token request's redirect_uri from this URL: build it from the
    // configured redirect URI, never from the request's Host.
    const current = new URL(redirectUri);
    current.search = callbackUrl.search;
    try {
      const tokens = await oauth.authorizationCodeGrant(
        configuration,
        current,
        { pkceCodeVerifier: data.verifier, expectedState: state },
        data.resource ? { resource: data.resource } : undefined,
      );
      return toTokenSet(tokens, data.issuer, data.clientId, data.resource);
    } catch (error) {
      throw describeOAuthError(error);
    }
  }

  async refresh(tokens: TokenSet, { redirectUri }: TokenContext): Promise<TokenSet> {
    if (!tokens.refreshToken) throw new SignInError('failed', 'no refresh token');
    const configuration = await this.#configurationFor(tokens.issuer, tokens.clientId, redirectUri);
    try {
      const refreshed = await oauth.refreshTokenGrant(configuration, tokens.refreshToken, tokens.resource ? { resource: tokens.resource } : undefined);
      const next = toTokenSet(refreshed, tokens.issuer, tokens.clientId, tokens.resource);
      return next.refreshToken ? next : { ...next, refreshToken: tokens.refreshToken };
    } catch (error) {
      throw describeOAuthError(error);
    }
  }

  async revoke(tokens: TokenSet, { redirectUri }: TokenContext): Promise<boolean> {
    const configuration = await this.#configurationFor(tokens.issuer, tokens.clientId, redirectUri);
    if (!configuration.serverMetadata().revocation_endpoint) return false;
    await oauth.tokenRevocation(configuration, tokens.refreshToken ?? tokens.accessToken, {
      token_type_hint: tokens.refreshToken ? 'refresh_token' : 'access_token',
    });
    return true;
  }

  async #discover(challenge?: UpstreamChallenge): Promise<{ metadata: oauth.ServerMetadata; resource?: string; scope?: string }> {
    const configuredScope = this.#auth.scopes?.join(' ');
    if (this.#auth.authorizationUrl && this.#auth.tokenUrl) {
      const metadata = {
        issuer: this.#auth.issuer ?? new URL(this.#auth.authorizationUrl).origin,
        authorization_endpoint: this.#auth.authorizationUrl,
        token_endpoint: this.#auth.tokenUrl,
      };
      return withOptional(metadata, this.#auth.resource, configuredScope);
    }
    if (this.#auth.issuer) {
      return withOptional(await this.#discoverIssuer(this.#auth.issuer), this.#auth.resource, configuredScope ?? challenge?.scope);
    }
    if (challenge?.resourceMetadataUrl) assertSafeUrl(challenge.resourceMetadataUrl.href, 'resource_metadata');
    // The SDK falls back to other URLs when a metadata request fails: a refusal by the guard must end discovery.
    let refused: SignInError | undefined;
    const fetchFn: typeof fetch = (input, init) =>
      this.#fetch(input, init).catch((error: unknown) => {
        if (error instanceof SignInError) refused ??= error;
        throw error;
      });
    const info = await discoverOAuthServerInfo(this.#connection.url, {
      fetchFn,
      ...(challenge?.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
    }).catch((error: unknown) => {
      throw refused ?? error;
    });
    if (refused) throw refused;
    if (!info.authorizationServerMetadata) throw new SignInError('failed', `no authorization server metadata at ${new URL(info.authorizationServerUrl).origin}`);
    const metadata = info.authorizationServerMetadata as unknown as oauth.ServerMetadata;
    assertSafeUrl(metadata.issuer, 'the authorization server');
    const expected = this.#auth.resource ?? this.#connection.url;
    const named = info.resourceMetadata?.resource;
    // RFC 9728 §3.3: metadata for another resource is refused, and no token is asked for it.
    if (named !== undefined && !checkResourceAllowed({ requestedResource: expected, configuredResource: named })) {
      throw new SignInError('failed', `the server's protected-resource metadata is for ${describeUrl(named)}, not this connection's ${describeUrl(expected)}: no token was requested`);
    }
    const resource = named ?? expected;
    const scope = configuredScope ?? challenge?.scope ?? info.resourceMetadata?.scopes_supported?.join(' ');
    return withOptional(metadata, resource, scope);
  }

  /** RFC 8414 then OIDC discovery, path-aware, as the MCP SDK does it. */
  async #discoverIssuer(issuer: string): Promise<oauth.ServerMetadata> {
    assertSafeUrl(issuer, 'the issuer');
    const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: this.#fetch });
    if (!metadata) throw new SignInError('failed', `no authorization server metadata at ${new URL(issuer).origin}`);
    return metadata as unknown as oauth.ServerMetadata;
  }

  async #client(metadata: oauth.ServerMetadata, redirectUri: string): Promise<{ clientId: string; clientSecret?: string }> {
    if (this.#auth.clientId) return { clientId: this.#auth.clientId, ...(this.#auth.clientSecret ? { clientSecret: this.#auth.clientSecret } : {}) };
    const key = `${metadata.issuer} ${redirectUri}`;
    const known = await this.#store.getClient(key);
    if (known) return known;
    if (!metadata.registration_endpoint) {
      throw new SignInError('failed', `connection "${this.#connection.name}" has no auth.clientId and ${metadata.issuer} does not allow dynamic registration`);
    }
    const registered = await oauth.dynamicClientRegistration(
      new URL(metadata.issuer),
      {
        client_name: 'Eve/Flue bridge',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      undefined,
      { ...allowLoopback(metadata.issuer), algorithm: 'oauth2', [oauth.customFetch]: this.#fetch },
    );
    const client = registered.clientMetadata();
    const stored = { clientId: client.client_id, redirectUri, ...(typeof client.client_secret === 'string' ? { clientSecret: client.client_secret } : {}) };
    await this.#store.putClient(key, stored);
    return stored;
  }

  #configuration(metadata: oauth.ServerMetadata, client: { clientId: string; clientSecret?: string }): Promise<oauth.Configuration> {
    const key = `${metadata.issuer} ${client.clientId}`;
    let configuration = this.#configurations.get(key);
    if (!configuration) {
      const built = new oauth.Configuration(metadata, client.clientId, client.clientSecret, client.clientSecret ? undefined : oauth.None());
      if (isLoopbackHttp(metadata.issuer) || isLoopbackHttp(String(metadata.token_endpoint))) oauth.allowInsecureRequests(built);
      built[oauth.customFetch] = this.#fetch;
      configuration = Promise.resolve(built);
      this.#configurations.set(key, configuration);
    }
    return configuration;
  }

  /** The configuration a flow or token was made with: the same server and client, never another. */
  async #configurationFor(issuer: string, clientId: string, redirectUri: string): Promise<oauth.Configuration> {
    const cached = this.#configurations.get(`${issuer} ${clientId}`);
    if (cached) return cached;
    const metadata = this.#auth.authorizationUrl ? (await this.#discover()).metadata : await this.#discoverIssuer(issuer);
    const client = clientId === this.#auth.clientId ? await this.#client(metadata, redirectUri) : await this.#store.getClient(`${issuer} ${redirectUri}`);
    if (!client || client.clientId !== clientId) throw new SignInError('failed', `the client registered with ${issuer} is no longer known`);
    return this.#configuration(metadata, client);
  }
}

/** A URL as safe to show: origin and path, no query. */
function describeUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

function withOptional(metadata: oauth.ServerMetadata, resource: string | undefined, scope: string | undefined) {
  return { metadata, ...(resource ? { resource } : {}), ...(scope ? { scope } : {}) };
}

function toTokenSet(tokens: oauth.TokenEndpointResponse, issuer: string, clientId: string, resource?: string): TokenSet {
  const expiresIn = typeof tokens.expires_in === 'number' ? tokens.expires_in : undefined;
  return {
    accessToken: tokens.access_token,
    tokenType: tokens.token_type ?? 'bearer',
    issuer,
    clientId,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(expiresIn !== undefined ? { expiresAt: Date.now() + expiresIn * 1000 } : {}),
    ...(typeof tokens.scope === 'string' ? { scope: tokens.scope } : {}),
    ...(resource ? { resource } : {}),
  };
}

/** What went wrong, in words safe to show: OAuth error codes only, never a token or a code. */
function describeOAuthError(error: unknown): SignInError {
  if (error instanceof oauth.AuthorizationResponseError) {
    return new SignInError(error.error === 'access_denied' ? 'declined' : 'failed', `the provider answered ${error.error}`);
  }
  if (error instanceof oauth.ResponseBodyError) return new SignInError('failed', `the token endpoint answered ${error.error} (HTTP ${error.status})`);
  if (error instanceof SignInError) return error;
  if (error instanceof oauth.ClientError) {
    const status = (error.cause as { status?: unknown } | undefined)?.status;
    const answered = typeof status === 'number' ? ` (HTTP ${status})` : '';
    return new SignInError('failed', `the provider's response was not usable${answered}: ${error.code ?? 'invalid response'}`);
  }
  return new SignInError('failed', 'the token exchange failed');
}
