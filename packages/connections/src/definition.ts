import type { Principal } from '@eve-flue/session-contract';

/**
 * What a Flue agent author declares about a connection. `defineFlueConnection` validates and
 * freezes it, so a mistake fails when the module loads, with a message naming the field.
 */

export interface OAuth2Settings {
  type: 'oauth2';
  /** Omit to register dynamically (RFC 7591) where the server allows it. */
  clientId?: string;
  clientSecret?: string;
  scopes?: readonly string[];
  /** Explicit endpoints (GitHub style); both or neither. */
  authorizationUrl?: string;
  tokenUrl?: string;
  /** Discover endpoints from this issuer (OIDC, then RFC 8414). */
  issuer?: string;
  /** RFC 8707 resource indicator; defaults to what the server's protected-resource metadata says. */
  resource?: string;
  /**
   * Let sign-in requests (discovery, registration, token, revocation) reach loopback, private and
   * link-local addresses. Default false: only the kind of network the connection's own host is on.
   */
  allowPrivateNetwork?: boolean;
}

/**
 * Who a credential is resolved for: the turn's caller and session. During discovery (the
 * bridge listing a server's tools at startup) neither is known.
 */
export interface CredentialContext {
  /** The caller's principal id (`auth.id`). */
  principal?: string;
  /** The whole caller (Eve's `session.auth.current`): type, issuer, subject, attributes. */
  auth?: Principal;
  sessionId?: string;
}

/** A credential, fixed or resolved per request for the caller. Resolved values never leave the upstream request. */
export type CredentialValue = string | ((ctx: CredentialContext) => string | Promise<string>);

/** A fixed or per-caller token, sent as `Authorization: Bearer <token>`. */
export interface BearerSettings {
  type: 'bearer';
  token: CredentialValue;
}

export type ConnectionAuth = OAuth2Settings | BearerSettings;

/** What the server declares about a tool (MCP tool annotations); untrusted unless the server is. */
export interface ConnectionToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One call of a connection tool, as an approval policy sees it. */
export interface ApprovalCall {
  /** The Eve name: `connection__<server>__<tool>`. */
  toolName: string;
  /** The input the model produced; undefined when it is not an object. */
  input: Record<string, unknown> | undefined;
  /** What the server declared for the tool; undefined when it declared nothing. */
  annotations: Readonly<ConnectionToolAnnotations> | undefined;
}

/** `user-approval` asks a person; `not-applicable` and `approved` run the call; `denied` refuses it. */
export type ApprovalDecision = 'user-approval' | 'not-applicable' | 'approved' | 'denied';

export type ApprovalPolicy = 'never' | 'always' | ((call: ApprovalCall) => ApprovalDecision | Promise<ApprovalDecision>);

export interface FlueConnectionDefinition {
  /** The connection's name: Flue's `mcp__<name>__` namespace and Eve's `connection__<name>__`. */
  name: string;
  /** The MCP server's Streamable HTTP endpoint. */
  url: string;
  description?: string;
  /** Shown on sign-in prompts; defaults to the name with a capital letter. */
  displayName?: string;
  /** Allowlist of the server's own tool names. */
  tools?: readonly string[];
  /** Headers sent upstream on every request; a function value is resolved per request for the caller. */
  headers?: Readonly<Record<string, CredentialValue>>;
  auth?: ConnectionAuth;
  /** Hide this connection's tools from turns without an authenticated caller. */
  requiresPrincipal?: boolean;
  /** Which calls of this connection's tools wait for a person's approval. Default `never`. */
  approval?: ApprovalPolicy;
  /** Longest wait for one upstream MCP request. Default 30 s. */
  timeoutMs?: number;
  /** Vercel Connect connector UID, set by `defineFlueConnectionWithConnect`. */
  connector?: string;
  /**
   * For a connection a resolver returns per caller: a stable, non-secret account or tenant id,
   * part of the connection's identity with its URL (required there when it has a credential).
   */
  instanceKey?: string;
}

const CONNECTION_KEYS = new Set(['name', 'url', 'description', 'displayName', 'tools', 'headers', 'auth', 'timeoutMs', 'connector', 'requiresPrincipal', 'approval', 'instanceKey']);
const OAUTH_KEYS = new Set(['type', 'clientId', 'clientSecret', 'scopes', 'authorizationUrl', 'tokenUrl', 'issuer', 'resource', 'allowPrivateNetwork']);
const BEARER_KEYS = new Set(['type', 'token']);
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** RFC 9110 field name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export class ConnectionDefinitionError extends Error {
  override name = 'ConnectionDefinitionError';
}

export function defineFlueConnection(definition: FlueConnectionDefinition): Readonly<FlueConnectionDefinition> {
  const where = `connection "${typeof definition?.name === 'string' ? definition.name : '?'}"`;
  const fail = (field: string, problem: string): never => {
    throw new ConnectionDefinitionError(`[eve-flue] ${where}: \`${field}\` ${problem}`);
  };
  if (typeof definition !== 'object' || definition === null) throw new ConnectionDefinitionError('[eve-flue] a connection definition must be an object');
  for (const key of Object.keys(definition)) if (!CONNECTION_KEYS.has(key)) fail(key, 'is not a connection field');
  if (typeof definition.name !== 'string' || !NAME.test(definition.name)) fail('name', 'must be letters, digits, `_` or `-`, starting with a letter or digit');
  if (definition.name === 'eve' || definition.name.startsWith('eve__')) fail('name', 'may not be `eve` or start with `eve__` (reserved by Eve)');
  checkUrl(definition.url, 'url', fail);
  for (const field of ['description', 'displayName', 'connector', 'instanceKey'] as const) {
    if (definition[field] !== undefined && (typeof definition[field] !== 'string' || definition[field] === '')) fail(field, 'must be a non-empty string');
  }
  if (definition.tools !== undefined) {
    if (!Array.isArray(definition.tools) || definition.tools.some((t) => typeof t !== 'string' || t === '')) fail('tools', 'must be an array of tool names');
    if (new Set(definition.tools).size !== definition.tools.length) fail('tools', 'lists a tool twice');
  }
  if (definition.headers !== undefined) {
    if (typeof definition.headers !== 'object' || definition.headers === null) fail('headers', 'must be an object of strings or functions');
    for (const [header, value] of Object.entries(definition.headers)) {
      if (!HEADER_NAME.test(header)) fail(`headers.${header}`, 'is not a valid header name');
      if (typeof value !== 'function' && typeof value !== 'string') fail(`headers.${header}`, 'must be a string or a function `(ctx) => string`');
      if (header.toLowerCase() === 'authorization' && definition.auth !== undefined) fail(`headers.${header}`, 'and `auth` both set Authorization: keep one');
    }
  }
  if (definition.requiresPrincipal !== undefined && typeof definition.requiresPrincipal !== 'boolean') fail('requiresPrincipal', 'must be true or false');
  const approval: unknown = definition.approval;
  if (approval !== undefined && approval !== 'never' && approval !== 'always' && typeof approval !== 'function') {
    fail('approval', 'must be "never", "always" or a function `(call) => decision`');
  }
  if (definition.timeoutMs !== undefined && !(Number.isInteger(definition.timeoutMs) && definition.timeoutMs > 0)) {
    fail('timeoutMs', 'must be a positive whole number of milliseconds');
  }
  if (definition.auth !== undefined) checkAuth(definition.auth, fail);
  return Object.freeze({
    ...definition,
    ...(definition.tools ? { tools: Object.freeze([...definition.tools]) } : {}),
    ...(definition.headers ? { headers: Object.freeze({ ...definition.headers }) } : {}),
    ...(definition.auth ? { auth: Object.freeze(definition.auth.type === 'oauth2' && definition.auth.scopes ? { ...definition.auth, scopes: Object.freeze([...definition.auth.scopes]) } : { ...definition.auth }) } : {}),
  });
}

/** A Vercel Connect connector UID: `<service>/<name>`, e.g. `linear/my-agent`. */
const CONNECTOR_UID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A connection whose tokens come from Vercel Connect: `connector` is the connector UID
 * (`vercel connect create <service> --name <name>`, then `vercel connect attach <uid>`).
 */
export function defineFlueConnectionWithConnect(
  definition: FlueConnectionDefinition & { connector: string },
): Readonly<FlueConnectionDefinition & { connector: string }> {
  if (typeof definition !== 'object' || definition === null) throw new ConnectionDefinitionError('[eve-flue] a connection definition must be an object');
  if (typeof definition.connector !== 'string' || !CONNECTOR_UID.test(definition.connector)) {
    const where = `connection "${typeof definition.name === 'string' ? definition.name : '?'}"`;
    throw new ConnectionDefinitionError(`[eve-flue] ${where}: \`connector\` must be a Vercel Connect connector UID of the form \`<service>/<name>\` (e.g. "linear/my-agent")`);
  }
  return defineFlueConnection(definition) as Readonly<FlueConnectionDefinition & { connector: string }>;
}

function checkAuth(auth: ConnectionAuth, fail: (field: string, problem: string) => never): void {
  if (typeof auth !== 'object' || auth === null) fail('auth', 'must be an object');
  if (auth.type === 'bearer') return checkBearer(auth, fail);
  if (auth.type !== 'oauth2') fail('auth.type', 'must be "oauth2" or "bearer"');
  for (const key of Object.keys(auth)) if (!OAUTH_KEYS.has(key)) fail(`auth.${key}`, 'is not an OAuth setting');
  for (const field of ['clientId', 'clientSecret'] as const) {
    if (auth[field] !== undefined && (typeof auth[field] !== 'string' || auth[field] === '')) fail(`auth.${field}`, 'must be a non-empty string');
  }
  if (auth.clientSecret !== undefined && auth.clientId === undefined) fail('auth.clientSecret', 'needs `auth.clientId`');
  if (auth.scopes !== undefined && (!Array.isArray(auth.scopes) || auth.scopes.some((s) => typeof s !== 'string' || s === ''))) {
    fail('auth.scopes', 'must be an array of scope strings');
  }
  for (const field of ['authorizationUrl', 'tokenUrl', 'issuer', 'resource'] as const) {
    if (auth[field] !== undefined) checkUrl(auth[field], `auth.${field}`, fail);
  }
  if ((auth.authorizationUrl === undefined) !== (auth.tokenUrl === undefined)) fail('auth.authorizationUrl', 'and `auth.tokenUrl` go together');
  if (auth.authorizationUrl !== undefined && auth.clientId === undefined) fail('auth.clientId', 'is required with explicit endpoints');
  if (auth.allowPrivateNetwork !== undefined && typeof auth.allowPrivateNetwork !== 'boolean') fail('auth.allowPrivateNetwork', 'must be true or false');
}

function checkBearer(auth: BearerSettings, fail: (field: string, problem: string) => never): void {
  for (const key of Object.keys(auth)) if (!BEARER_KEYS.has(key)) fail(`auth.${key}`, 'is not a bearer setting');
  const token: unknown = auth.token;
  if (typeof token !== 'function' && (typeof token !== 'string' || token === '')) fail('auth.token', 'must be a non-empty string or a function `(ctx) => string`');
}

/** Whether people sign in to this connection through the bridge (OAuth, or a Vercel Connect connector). */
export function hasSignIn(definition: Pick<FlueConnectionDefinition, 'auth' | 'connector'>): boolean {
  return definition.auth?.type === 'oauth2' || definition.connector !== undefined;
}

function checkUrl(value: unknown, field: string, fail: (field: string, problem: string) => never): void {
  if (typeof value !== 'string') fail(field, 'must be an absolute http(s) URL');
  let url: URL;
  try {
    url = new URL(value as string);
  } catch {
    return fail(field, `is not a valid URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(field, 'must use https (or http on loopback)');
  if (url.username || url.password) fail(field, 'may not embed credentials');
}

/** The name people see on a sign-in prompt. */
export function displayNameOf(definition: Pick<FlueConnectionDefinition, 'name' | 'displayName'>): string {
  return definition.displayName ?? definition.name.charAt(0).toUpperCase() + definition.name.slice(1);
}
