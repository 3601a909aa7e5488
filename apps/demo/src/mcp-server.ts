import express, { type Express, type RequestHandler } from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { DEMO_MCP_SCOPE } from './authorization-server.ts';

/** Tools that need a valid access token; the others (and initialize, tools/list) are public. */
const PROTECTED_TOOLS = new Set(['whoami']);

export interface DemoMcpAppOptions {
  /** The server's own URL, `http://127.0.0.1:<port>/mcp`: the audience its access tokens must carry. */
  mcpUrl: string;
  authorizationServer: { metadata: OAuthMetadata };
}

/** Builds the demo MCP server's tools; a fresh server per request keeps it stateless. */
function demoServer(): McpServer {
  const server = new McpServer({ name: 'eve-flue-demo', version: '0.1.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: { text: z.string().describe('The text to echo back') } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'whoami',
    { description: 'Names the signed-in user (needs OAuth sign-in).', inputSchema: {} },
    async (_args, extra) => {
      const subject = extra.authInfo?.extra?.sub;
      if (typeof subject !== 'string') return { isError: true, content: [{ type: 'text', text: 'unauthenticated' }] };
      return { content: [{ type: 'text', text: subject }] };
    },
  );
  return server;
}

/**
 * The embedded demo's MCP server: Streamable HTTP at `/mcp`, stateless. `whoami` needs a bearer token from the
 * demo authorization server; without one the answer is a 401 pointing at the protected-resource metadata (RFC 9728).
 */
export function createDemoMcpApp({ mcpUrl, authorizationServer }: DemoMcpAppOptions): Express {
  const resource = new URL(mcpUrl);
  const bearer = requireBearerAuth({
    verifier: jwtAccessTokenVerifier(authorizationServer.metadata, mcpUrl),
    requiredScopes: [DEMO_MCP_SCOPE],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource),
    expectedResource: resource,
  });
  // A presented token is always checked, so a bad one is refused even on a public tool.
  const bearerWhenNeeded: RequestHandler = (request, response, next) =>
    request.headers.authorization !== undefined || callsProtectedTool(request.body) ? bearer(request, response, next) : next();

  const app = express();
  app.disable('x-powered-by');
  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata: authorizationServer.metadata,
      resourceServerUrl: resource,
      scopesSupported: [DEMO_MCP_SCOPE],
      resourceName: 'Eve/Flue demo',
    }),
  );
  app.post('/mcp', express.json(), bearerWhenNeeded, async (request, response) => {
    const server = demoServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  const notAllowed: express.RequestHandler = (_request, response) => {
    response.status(405).set('allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
  return app;
}

function callsProtectedTool(body: unknown): boolean {
  return [body].flat().some((message) => {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    return call?.method === 'tools/call' && typeof call.params?.name === 'string' && PROTECTED_TOOLS.has(call.params.name);
  });
}

/** Checks the authorization server's JWT access tokens locally: signature (JWKS), issuer, audience and type. */
function jwtAccessTokenVerifier(metadata: OAuthMetadata, mcpUrl: string): OAuthTokenVerifier {
  if (!metadata.jwks_uri) throw new Error('[demo MCP server] the authorization server publishes no jwks_uri');
  const keys = createRemoteJWKSet(new URL(metadata.jwks_uri));
  return {
    async verifyAccessToken(token) {
      try {
        const expected = { issuer: metadata.issuer, audience: mcpUrl, typ: 'at+jwt', algorithms: ['RS256'] };
        const { payload } = await jwtVerify(token, keys, expected);
        return {
          token,
          clientId: String(payload.client_id ?? ''),
          scopes: String(payload.scope ?? '').split(' ').filter(Boolean),
          ...(payload.exp !== undefined ? { expiresAt: payload.exp } : {}),
          resource: new URL(mcpUrl),
          extra: { sub: payload.sub },
        };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const reason = error instanceof Error ? error.message : 'invalid token';
        throw new InvalidTokenError(`${typeof code === 'string' ? code : 'ERR'}: ${reason}`);
      }
    },
  };
}
