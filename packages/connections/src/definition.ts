import { CREDENTIAL_HEADERS } from './upstream-fetch.ts';

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
  /** Static headers sent upstream on every request (never an Authorization header). */
  headers?: Readonly<Record<string, string>>;
  auth?: OAuth2Settings;
  /** Longest wait for one upstream MCP request. Default 30 s. */
  timeoutMs?: number;
  /** Vercel Connect connector UID, set by `defineFlueConnectionWithConnect`. */
  connector?: string;
}

const CONNECTION_KEYS = new Set(['name', 'url', 'description', 'displayName', 'tools', 'headers', 'auth', 'timeoutMs', 'connector']);
const OAUTH_KEYS = new Set(['type', 'clientId', 'clientSecret', 'scopes', 'authorizationUrl', 'tokenUrl', 'issuer', 'resource', 'allowPrivateNetwork']);
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const FORBIDDEN_HEADERS = new Set(CREDENTIAL_HEADERS);

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
  for (const field of ['description', 'displayName', 'connector'] as const) {
    if (definition[field] !== undefined && (typeof definition[field] !== 'string' || definition[field] === '')) fail(field, 'must be a non-empty string');
  }
  if (definition.tools !== undefined) {
    if (!Array.isArray(definition.tools) || definition.tools.some((t) => typeof t !== 'string' || t === '')) fail('tools', 'must be an array of tool names');
    if (new Set(definition.tools).size !== definition.tools.length) fail('tools', 'lists a tool twice');
  }
  if (definition.headers !== undefined) {
    if (typeof definition.headers !== 'object' || definition.headers === null) fail('headers', 'must be an object of strings');
    for (const [header, value] of Object.entries(definition.headers)) {
      if (typeof value !== 'string') fail(`headers.${header}`, 'must be a string');
      if (FORBIDDEN_HEADERS.has(header.toLowerCase())) fail(`headers.${header}`, 'may not carry credentials: use `auth`');
    }
  }
  if (definition.timeoutMs !== undefined && !(Number.isInteger(definition.timeoutMs) && definition.timeoutMs > 0)) {
    fail('timeoutMs', 'must be a positive whole number of milliseconds');
  }
  if (definition.auth !== undefined) checkOAuth(definition.auth, fail);
  return Object.freeze({
    ...definition,
    ...(definition.tools ? { tools: Object.freeze([...definition.tools]) } : {}),
    ...(definition.headers ? { headers: Object.freeze({ ...definition.headers }) } : {}),
    ...(definition.auth ? { auth: Object.freeze({ ...definition.auth, ...(definition.auth.scopes ? { scopes: Object.freeze([...definition.auth.scopes]) } : {}) }) } : {}),
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

function checkOAuth(auth: OAuth2Settings, fail: (field: string, problem: string) => never): void {
  if (typeof auth !== 'object' || auth === null) fail('auth', 'must be an object');
  for (const key of Object.keys(auth)) if (!OAUTH_KEYS.has(key)) fail(`auth.${key}`, 'is not an OAuth setting');
  if (auth.type !== 'oauth2') fail('auth.type', 'must be "oauth2"');
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
