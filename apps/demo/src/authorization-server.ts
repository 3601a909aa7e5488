import { generateKeyPair, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import express from 'express';
import Provider, { errors, type ClientMetadata, type Configuration, type JWK } from 'oidc-provider';
import { OAuthMetadataSchema, type OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { DEMO_ACCOUNT_ID, demoInteractionRoutes } from './authorization-interactions.ts';
import { errorPage } from './authorization-pages.ts';
import { createMemoryAdapter } from './memory-adapter.ts';

/** The scope that lets a client call the demo MCP server's protected tools. */
export const DEMO_MCP_SCOPE = 'mcp:tools';

export interface DemoAuthorizationServerOptions {
  /** The MCP server's URL: the only resource indicator accepted, and the audience of every access token. */
  resource: string;
  /** Clients registered up front; others register dynamically (RFC 7591). */
  clients?: ClientMetadata[];
  /** Lifetimes in seconds, over the defaults (tests shorten `AuthorizationCode` or `AccessToken`). */
  ttl?: Configuration['ttl'];
}

export interface DemoAuthorizationServer {
  /** `http://127.0.0.1:<port>` */
  issuer: string;
  /** What `/.well-known/oauth-authorization-server` serves. */
  metadata: OAuthMetadata;
  /** The oidc-provider instance, for tests. */
  provider: Provider;
  close(): Promise<void>;
}

const DEFAULT_TTL = {
  AccessToken: 60 * 60,
  AuthorizationCode: 60,
  IdToken: 60 * 60,
  RefreshToken: 14 * 24 * 60 * 60,
  Interaction: 60 * 60,
  Session: 14 * 24 * 60 * 60,
  Grant: 14 * 24 * 60 * 60,
};

/**
 * The embedded demo's OAuth authorization server (oidc-provider) on 127.0.0.1: dynamic client registration,
 * PKCE, refresh tokens, revocation, and JWT access tokens bound to `resource`. Signing in is one Approve click as `demo-user`.
 */
export async function startDemoAuthorizationServer(options: DemoAuthorizationServerOptions): Promise<DemoAuthorizationServer> {
  // Listen first so the issuer can carry the port.
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  try {
    const provider = new Provider(issuer, providerConfiguration(options, await signingKey()));
    const app = express();
    app.disable('x-powered-by');
    app.use(demoInteractionRoutes(provider));
    app.use(provider.callback());
    server.on('request', app);
    return { issuer, metadata: await fetchMetadata(issuer), provider, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function providerConfiguration({ resource, clients = [], ttl }: DemoAuthorizationServerOptions, key: JWK): Configuration {
  const ownTokensOnly = (_ctx: unknown, client: { clientId: string }, token: { clientId?: string | undefined }) =>
    token.clientId === client.clientId;
  return {
    adapter: createMemoryAdapter(),
    clients,
    jwks: { keys: [key] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    findAccount: async (_ctx, sub) => (sub === DEMO_ACCOUNT_ID ? { accountId: sub, claims: async () => ({ sub }) } : undefined),
    scopes: ['openid', 'offline_access', DEMO_MCP_SCOPE],
    pkce: { required: () => true },
    // By default refresh tokens come only with `offline_access`, which OIDC ties to `prompt=consent`.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: async (ctx, out) => {
      const page = errorPage(out.error, out.error_description);
      ctx.set(page.headers);
      ctx.body = page.body;
    },
    ttl: { ...DEFAULT_TTL, ...ttl },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true, allowedPolicy: ownTokensOnly },
      introspection: { enabled: true, allowedPolicy: ownTokensOnly },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return { scope: DEMO_MCP_SCOPE, audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
  };
}

/** A fresh RS256 key per start, so no signing key is ever stored. */
async function signingKey(): Promise<JWK> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

async function fetchMetadata(issuer: string): Promise<OAuthMetadata> {
  const response = await fetch(new URL('/.well-known/oauth-authorization-server', issuer));
  if (!response.ok) throw new Error(`[demo authorization server] metadata: HTTP ${response.status}`);
  return OAuthMetadataSchema.parse(await response.json());
}
