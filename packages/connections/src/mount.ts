import { credentialHeaders } from './credentials.ts';
import type { CredentialContext, FlueConnectionDefinition } from './definition.ts';
import { openApiServerFetch } from './openapi/mcp-server.ts';
import { createUpstreamFetch, type UpstreamAuthorizer } from './upstream-fetch.ts';

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

/** A connection as Flue's `useMcpConnection` takes it (`McpConnectionDefinition`). */
export interface FlueMcpMount {
  name: string;
  url: string;
  fetch: typeof fetch;
  timeoutMs: number;
  optional: true;
}

export interface MountOptions {
  /** Tokens and sign-ins for this mount, if the connection has any. */
  authorizer?: UpstreamAuthorizer;
  /**
   * Extra time Flue must allow on top of the upstream timeout: a call parked while a person
   * signs in must not time out inside Flue (its MCP client ignores progress notifications).
   */
  parkedForMs?: number;
  /** Whom the connection's credentials are resolved for, per request. Default: nobody (discovery). */
  context?: () => CredentialContext;
}

/**
 * The Flue definition of a bridge connection. Always `optional`: a server that is down or
 * refuses the agent leaves the turn running without its tools. All traffic goes through the
 * bridge's upstream fetch, which holds the real per-request timeout; an OpenAPI connection's MCP
 * traffic stays in the bridge, and only its operations' requests go through that fetch. Which
 * tools the model sees is decided where the listing is read (`tool-call.ts`), not by Flue.
 */
export function flueMountFor(definition: Readonly<FlueConnectionDefinition>, options: MountOptions = {}): FlueMcpMount {
  const upstreamTimeoutMs = definition.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const context = () => options.context?.() ?? {};
  const authorizer = options.authorizer ? { authorizer: options.authorizer } : {};
  const { openapi } = definition;
  return {
    name: definition.name,
    url: definition.url,
    optional: true,
    timeoutMs: upstreamTimeoutMs + (options.parkedForMs ?? 0),
    fetch: openapi
      ? openApiServerFetch({ ...definition, openapi }, { timeoutMs: upstreamTimeoutMs, context, ...authorizer })
      : createUpstreamFetch({ timeoutMs: upstreamTimeoutMs, headers: () => credentialHeaders(definition, context()), ...authorizer }),
  };
}
