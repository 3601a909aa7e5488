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

const BEARER = /^Bearer(\s|$)/i;

/**
 * A 401's challenges with the MCP resource's metadata added, as Eve's channel adds it: to the
 * `Bearer` challenge route auth answered (which keeps its `error="invalid_token"`), or as a
 * `Bearer` challenge of its own; other schemes (`Basic`, ...) stay as they are.
 */
export function withResourceMetadata(challenges: readonly string[], metadata: { url: string; scopes?: readonly string[] }): string[] {
  const extra = (challenge: string) => [
    ...(/(^|[\s,])resource_metadata\s*=/i.test(challenge) ? [] : [`resource_metadata=${quoted(metadata.url)}`]),
    ...(metadata.scopes?.length && !/(^|[\s,])scope\s*=/i.test(challenge) ? [`scope=${quoted(metadata.scopes.join(' '))}`] : []),
  ];
  const index = challenges.findIndex((challenge) => BEARER.test(challenge));
  if (index < 0) return [...challenges, `Bearer ${extra('').join(', ')}`];
  const bearer = challenges[index]!.trim();
  const added = extra(bearer);
  const augmented = added.length === 0 ? bearer : bearer.toLowerCase() === 'bearer' ? `Bearer ${added.join(', ')}` : `${bearer}, ${added.join(', ')}`;
  return challenges.map((challenge, i) => (i === index ? augmented : challenge));
}
