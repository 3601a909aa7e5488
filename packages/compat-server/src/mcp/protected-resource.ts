/**
 * OAuth protected-resource metadata for the MCP endpoint (RFC 9728) and the Bearer challenge of
 * a refused request, as Eve's `oauthResource()` publishes them. The bridge verifies no token
 * here: its route auth does; this only tells a client where to sign in.
 */

export interface McpOAuthOptions {
  /** The authorization server that issues the tokens route auth accepts. */
  issuer: string;
  /** Scopes a client should ask for (advertised only; route auth enforces them). */
  scopes?: readonly string[];
  /** The resource identifier clients see, when it cannot be derived from the request (a proxy in front). */
  resource?: string;
}

export const METADATA_PREFIX = '/.well-known/oauth-protected-resource';

export function protectedResourceMetadata(oauth: McpOAuthOptions, resource: string) {
  return {
    authorization_servers: [oauth.issuer],
    resource: oauth.resource ?? resource,
    ...(oauth.scopes ? { scopes_supported: [...oauth.scopes] } : {}),
  };
}

/** RFC 7235 quoted-string: backslash and quote escaped. */
const quoted = (value: string) => `"${value.replaceAll(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * The `WWW-Authenticate` of a 401: `error="invalid_token"` when a token was sent and refused; with
 * OAuth configured, where the metadata is and which scopes to ask for.
 */
export function bearerChallenge(tokenSent: boolean, metadata: { url: string; scopes?: readonly string[] } | undefined): string {
  const parameters: string[] = [];
  if (tokenSent) parameters.push('error="invalid_token"');
  if (metadata) {
    parameters.push(`resource_metadata=${quoted(metadata.url)}`);
    if (metadata.scopes?.length) parameters.push(`scope=${quoted(metadata.scopes.join(' '))}`);
  }
  return parameters.length === 0 ? 'Bearer' : `Bearer ${parameters.join(', ')}`;
}
