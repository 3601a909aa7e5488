import { isIPv6 } from 'node:net';
import type { ToolDefinition } from '@flue/runtime';
import type { PersistenceAdapter } from '@flue/runtime/adapter';
import { ConfigurationError, resolveLimits, resolveMode, type CompatServerOptions, type McpChannelOptions, type Mode, type RequestLimits, type RouteAuthPolicy, type SessionOwnerPolicy, type TrustedForwarders, validateMcpOptions } from '@eve-flue/compat-server';
import { isLoopbackHostname } from '@eve-flue/eve-protocol';
import { DEFAULT_REDIS_PREFIX } from '@eve-flue/session-contract';
import { checkedTools, type FlueAgent, type FlueRuntimeOptions } from '@eve-flue/flue-adapter';
import type { BridgeConfig } from './config.ts';

/** The environment the bridge reads its settings from: `process.env` unless a caller hands another. */
export type Env = Readonly<Record<string, string | undefined>>;

/** How a config field's value is checked; `what` completes "must be …" in the error. */
interface FieldCheck<T> {
  what: string;
  is(value: unknown): value is T;
  /** A check that names what is wrong itself (it throws a message starting with the field). */
  validate?(value: T): void;
}

/** An environment variable a setting falls back to; `parse` gives undefined for a text that is not a value. */
interface Variable<T> {
  name: string;
  /** What the text must be, completing `"…" is not …`. */
  what: string;
  parse(text: string): T | undefined;
  /** One line for `--help` and `.env.example`. */
  help: string;
  /** What `.env.example` shows commented out; nothing for a secret. */
  example?: string;
  /** Never repeated in an error. */
  secret?: boolean;
}

interface Setting<T> {
  /** Checked when the config sets it; absent for a setting only the environment gives. */
  field?: FieldCheck<T>;
  /** Used when the config does not set it. */
  variable?: Variable<T>;
  /** Used when neither does. */
  fallback?: T;
}

const fieldCheck = <T>(what: string, is: (value: unknown) => boolean): FieldCheck<T> => ({ what, is: is as (value: unknown) => value is T });

const isPort = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0 && (value as number) < 65536;
const wholeNumber = (text: string): number | undefined => (/^\d+$/.test(text) ? Number(text) : undefined);

const PORT = fieldCheck<number>('a port number', isPort);
const milliseconds = (min: 0 | 1) =>
  fieldCheck<number>(min === 0 ? 'a number of milliseconds' : 'a positive number of milliseconds', (value) => Number.isInteger(value) && (value as number) >= min);
const TEXT = fieldCheck<string>('a non-empty string', (value) => typeof value === 'string' && value !== '');
const FUNCTION = (what: string) => fieldCheck<never>(what, (value) => typeof value === 'function');
const ABSOLUTE_URL = fieldCheck<string>('an absolute URL', (value) => typeof value === 'string' && URL.canParse(value));

const TOKEN_KEY_BYTES = 32;
const isTokenKey = (value: unknown): value is string =>
  typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === TOKEN_KEY_BYTES;

const isOrigin = (text: string) => URL.canParse(text) && new URL(text).origin === text;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const LIMIT_KEYS = new Set(Object.keys(resolveLimits(1)));

/** The interface to listen on, normalized once: as `listen()` takes it and as a URL names it. */
export interface ListenHost {
  /** For `listen()`: `::1`, `127.0.0.1`, `0.0.0.0`. */
  address: string;
  /** For a URL's authority: `[::1]`, `127.0.0.1`. */
  inUrl: string;
  loopback: boolean;
}

function listenHost(text: string): ListenHost | undefined {
  const address = text.replace(/^\[(.*)\]$/, '$1');
  const inUrl = isIPv6(address) ? `[${address}]` : address;
  if (address === '' || !URL.canParse(`http://${inUrl}`) || new URL(`http://${inUrl}`).hostname !== inUrl.toLowerCase()) return undefined;
  return { address, inUrl, loopback: isLoopbackHostname(address) };
}

/** The config's cors, or the origins `CORS_ORIGINS` lists. */
type Cors = NonNullable<CompatServerOptions['cors']>;

/**
 * Every setting of the bridge: its config field, environment variable and default, in one place.
 * The config's key set, the CLI's environment help and `init`'s `.env.example` come from here.
 */
const SETTINGS = {
  agent: { field: FUNCTION('a Flue agent function') },
  providers: { field: fieldCheck('a list of Flue model providers', Array.isArray) },
  tools: {
    field: { ...fieldCheck<readonly ToolDefinition[]>('a list of Flue tool definitions (defineTool from @flue/runtime)', Array.isArray), validate: (tools) => void checkedTools(tools) },
    fallback: [],
  },
  modelId: { field: TEXT, fallback: 'unknown' },
  connections: {
    field: fieldCheck('an array of connection definitions or a function `({ principal, sessionId }) => definitions`', (value) => Array.isArray(value) || typeof value === 'function'),
    fallback: [],
  },
  store: {
    field: fieldCheck('"sqlite", "memory" or { redis: "redis://host:port" }', (store) => {
      if (store === 'sqlite' || store === 'memory') return true;
      if (typeof store !== 'object' || store === null) return false;
      const { redis, prefix } = store as { redis?: unknown; prefix?: unknown };
      return typeof redis === 'string' && URL.canParse(redis) && (prefix === undefined || typeof prefix === 'string');
    }),
    fallback: 'sqlite',
  },
  flueDb: { field: fieldCheck('a Flue persistence adapter (an object with connect())', (db) => typeof (db as { connect?: unknown } | null)?.connect === 'function') },
  dataDir: {
    field: TEXT,
    variable: { name: 'DATA_DIR', what: 'a folder', parse: (text) => text, help: 'where the journal, sealed tokens and Flue’s conversations live (default ./.data)', example: './.data' },
    fallback: '.data',
  },
  port: {
    field: PORT,
    variable: { name: 'PORT', what: 'a port number', parse: (text) => [wholeNumber(text)].find(isPort), help: 'port to listen on (default 3000)', example: '3000' },
    fallback: 3000,
  },
  host: {
    field: fieldCheck('a host name or IP address', (value) => typeof value === 'string' && listenHost(value) !== undefined),
    variable: { name: 'HOST', what: 'a host name or IP address', parse: (text) => (listenHost(text) ? text : undefined), help: 'interface to listen on (default 127.0.0.1; ::1 for IPv6 loopback)', example: '127.0.0.1' },
    fallback: '127.0.0.1',
  },
  publicUrl: {
    field: ABSOLUTE_URL,
    variable: {
      name: 'PUBLIC_URL',
      what: 'an absolute URL',
      parse: (text) => (URL.canParse(text) ? text : undefined),
      help: 'the bridge’s public URL: its links and the OAuth redirect URI, <PUBLIC_URL>/eve/v1/oauth/callback (default http://<HOST>:<PORT>; localhost when HOST is not loopback)',
      example: 'https://agent.example.com',
    },
  },
  mode: { field: fieldCheck('"development" or "production"', (mode) => mode === 'development' || mode === 'production') },
  auth: {
    field: fieldCheck<RouteAuthPolicy>(
      'a route auth strategy or an array of them, e.g. oidc({...}) or [httpBasic({...}), localDev()]',
      (auth) => typeof auth === 'function' || (Array.isArray(auth) && auth.every((strategy) => typeof strategy === 'function')),
    ),
  },
  trustedForwarders: { field: fieldCheck<TrustedForwarders>('a function (forwarder, assertion) => boolean', (value) => typeof value === 'function') },
  mcp: { field: { ...fieldCheck<McpChannelOptions>('an object, e.g. {} or { tools: true }', (value) => typeof value === 'object' && value !== null), validate: validateMcpOptions } },
  sessions: {
    field: fieldCheck<{ owner: SessionOwnerPolicy }>(
      '{ owner: "principal" }',
      (sessions) => typeof sessions === 'object' && sessions !== null && (sessions as { owner?: unknown }).owner === 'principal' && Object.keys(sessions).length === 1,
    ),
  },
  cors: {
    field: fieldCheck<Cors>('true, false or cors options', (cors) => typeof cors === 'boolean' || (typeof cors === 'object' && cors !== null)),
    variable: {
      name: 'CORS_ORIGINS',
      what: 'a comma-separated list of origins such as https://app.example.com',
      parse: (text): Cors | undefined => {
        const origins = text.split(',').map((origin) => origin.trim()).filter(Boolean);
        return origins.every(isOrigin) ? { origin: origins } : undefined;
      },
      help: 'browser origins allowed to call the bridge (e.g. a useEveAgent app), comma-separated',
      example: 'https://app.example.com,https://admin.example.com',
    },
  },
  webPage: { field: fieldCheck('true or false', (value) => typeof value === 'boolean') },
  tokenKey: {
    field: fieldCheck('32 bytes, base64', isTokenKey),
    variable: {
      name: 'BRIDGE_TOKEN_KEY',
      what: '32 bytes, base64 (openssl rand -base64 32)',
      parse: (text) => (isTokenKey(text) ? text : undefined),
      help: '32 random bytes, base64 (openssl rand -base64 32): seals OAuth tokens at rest; required in production',
      secret: true,
    },
  },
  signInTtlMs: { field: milliseconds(1) },
  metricsPort: {
    field: PORT,
    variable: { name: 'METRICS_PORT', what: 'a port number', parse: (text) => [wholeNumber(text)].find(isPort), help: 'serve Prometheus metrics on 127.0.0.1:<port>/metrics (default: off)', example: '9464' },
  },
  shutdownGraceMs: {
    field: milliseconds(0),
    variable: { name: 'SHUTDOWN_GRACE_MS', what: 'a number of milliseconds', parse: wholeNumber, help: 'on SIGTERM, how long running turns get to finish (default 10000)', example: '10000' },
    fallback: 10_000,
  },
  limits: {
    field: fieldCheck<Partial<RequestLimits>>('an object of positive integers, e.g. { maxTextBytes: 65536 }', (limits) => typeof limits === 'object' && limits !== null),
  },
  streamLeaseMs: { field: milliseconds(1) },
  idleSessionMs: {
    field: milliseconds(0),
    variable: { name: 'IDLE_SESSION_MS', what: 'a number of milliseconds', parse: wholeNumber, help: 'how long an idle session stays in memory before it is evicted (default 300000)', example: '300000' },
  },
  maxResidentSessions: {
    field: fieldCheck<number>('a positive integer', (value) => Number.isSafeInteger(value) && (value as number) >= 1),
    variable: {
      name: 'MAX_RESIDENT_SESSIONS',
      what: 'a positive integer',
      parse: (text) => [wholeNumber(text)].find((value) => value !== undefined && Number.isSafeInteger(value) && value >= 1),
      help: 'the most sessions held in memory; the least recently used idle ones go first (default 1000)',
      example: '1000',
    },
  },
  // Only the environment gives these.
  logLevel: {
    variable: {
      name: 'LOG_LEVEL',
      what: LOG_LEVELS.join(', '),
      parse: (text) => LOG_LEVELS.find((level) => level === text.toLowerCase()),
      help: 'pino log level: trace, debug, info, warn, error (default info)',
      example: 'info',
    },
    fallback: 'info',
  },
  nodeEnv: {
    variable: { name: 'NODE_ENV', what: 'a mode', parse: (text) => text, help: 'production (any case) requires route auth in the config and BRIDGE_TOKEN_KEY; a config cannot downgrade it', example: 'production' },
  },
  vercelOidcToken: {
    variable: { name: 'VERCEL_OIDC_TOKEN', what: 'a token', parse: (text) => text, help: 'a Vercel OIDC token (vercel env pull): connections naming a connector sign in through Vercel Connect', secret: true },
  },
  vercel: { variable: { name: 'VERCEL', what: '1', parse: (text) => text, help: 'set to 1 on Vercel: Vercel Connect finds its token there' } },
} satisfies { [K in keyof BridgeConfig]-?: Setting<NonNullable<BridgeConfig[K]>> } & Record<'logLevel' | 'nodeEnv' | 'vercelOidcToken' | 'vercel', Setting<string>>;

type SettingName = keyof typeof SETTINGS;
const entries = Object.entries(SETTINGS) as [SettingName, Setting<unknown>][];

/** Every key a bridge config may have. */
export const CONFIG_KEYS: ReadonlySet<string> = new Set(entries.filter(([, setting]) => setting.field).map(([name]) => name));

/** Every environment variable the bridge reads, in the table's order. */
export const VARIABLES: readonly Readonly<Variable<unknown>>[] = entries.flatMap(([, setting]) => (setting.variable ? [setting.variable] : []));

/** The bridge's settings, resolved once: config, else environment, else default; checked and normalized. */
export interface BridgeSettings {
  agent: FlueAgent;
  providers?: FlueRuntimeOptions['providers'];
  tools: readonly ToolDefinition[];
  modelId: string;
  connections: NonNullable<BridgeConfig['connections']>;
  store: { kind: 'sqlite' } | { kind: 'memory' } | { kind: 'redis'; url: string; prefix: string };
  flueDb?: PersistenceAdapter;
  dataDir: string;
  port: number;
  host: ListenHost;
  /** Without trailing slashes; absent when neither the config nor PUBLIC_URL gives one. */
  publicUrl?: string;
  mode: Mode;
  auth?: RouteAuthPolicy;
  sessions?: { owner: SessionOwnerPolicy };
  trustedForwarders?: TrustedForwarders;
  mcp?: McpChannelOptions;
  cors?: Cors;
  webPage: boolean;
  tokenKey?: string;
  signInTtlMs?: number;
  metricsPort?: number;
  shutdownGraceMs: number;
  limits?: Partial<RequestLimits>;
  streamLeaseMs?: number;
  /** Absent: the compat server's default (5 minutes). */
  idleSessionMs?: number;
  /** Absent: the compat server's default (1,000). */
  maxResidentSessions?: number;
  logLevel: LogLevel;
  /** A Vercel OIDC token is at hand (VERCEL_OIDC_TOKEN, or running on Vercel): Connect can sign people in. */
  vercelConnect: boolean;
}

const fail = (problem: string): never => {
  throw new ConfigurationError(`[eve-flue] ${problem}`);
};

/** Checks every field the config sets against the table; a typo or a bad value fails naming the field. */
export function checkConfig(config: unknown): asserts config is BridgeConfig {
  if (typeof config !== 'object' || config === null) fail('bridge config: the config must be an object');
  const fields = config as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (!CONFIG_KEYS.has(key)) fail(`bridge config: \`${key}\` is not a bridge setting`);
  for (const [name, setting] of entries) {
    const value = fields[name];
    if (!setting.field || (value === undefined && name !== 'agent')) continue;
    if (!setting.field.is(value)) fail(`bridge config: \`${name}\` must be ${setting.field.what}`);
    try {
      setting.field.validate?.(value);
    } catch (error) {
      fail(`bridge config: ${(error as Error).message}`);
    }
  }
  for (const [key, value] of Object.entries(fields.limits ?? {})) {
    if (!LIMIT_KEYS.has(key)) fail(`bridge config: \`limits.${key}\` is not a limit`);
    if (!(Number.isInteger(value) && (value as number) > 0)) fail(`bridge config: \`limits.${key}\` must be a positive integer`);
  }
}

/**
 * Resolves every setting once: the config's value, else the environment's, else the default.
 * Config and environment are checked alike: a bad value fails here, naming the field or the
 * variable. `env` defaults to `process.env`, the only place the bridge reads it.
 */
export function resolveSettings(config: Readonly<BridgeConfig>, env: Env = process.env): Readonly<BridgeSettings> {
  checkConfig(config);
  const fields = config as unknown as Record<string, unknown>;
  const read = <N extends SettingName>(name: N): unknown => {
    if (fields[name] !== undefined) return fields[name];
    const variable = (SETTINGS[name] as Setting<unknown>).variable;
    const text = variable && env[variable.name]?.trim();
    if (variable && text) {
      const value = variable.parse(text);
      if (value === undefined) fail(variable.secret ? `${variable.name} is not ${variable.what}` : `${variable.name}: "${text}" is not ${variable.what}`);
      return value;
    }
    return (SETTINGS[name] as Setting<unknown>).fallback;
  };
  const store = config.store ?? 'sqlite';
  const mode = resolveMode(config.mode, read('nodeEnv') as string | undefined);
  const settings: BridgeSettings = {
    agent: config.agent,
    providers: config.providers,
    // Checked by checkConfig above; the runtime keeps its own checked copy.
    tools: read('tools') as readonly ToolDefinition[],
    modelId: read('modelId') as string,
    connections: read('connections') as BridgeSettings['connections'],
    store: typeof store === 'object' ? { kind: 'redis', url: store.redis, prefix: store.prefix ?? DEFAULT_REDIS_PREFIX } : { kind: store },
    flueDb: config.flueDb,
    dataDir: read('dataDir') as string,
    port: read('port') as number,
    host: listenHost(read('host') as string)!,
    publicUrl: (read('publicUrl') as string | undefined)?.replace(/\/+$/, ''),
    mode,
    auth: config.auth,
    sessions: config.sessions,
    trustedForwarders: config.trustedForwarders,
    mcp: config.mcp,
    cors: read('cors') as Cors | undefined,
    webPage: config.webPage ?? mode !== 'production',
    tokenKey: read('tokenKey') as string | undefined,
    signInTtlMs: config.signInTtlMs,
    metricsPort: read('metricsPort') as number | undefined,
    shutdownGraceMs: read('shutdownGraceMs') as number,
    limits: config.limits,
    streamLeaseMs: config.streamLeaseMs,
    idleSessionMs: read('idleSessionMs') as number | undefined,
    maxResidentSessions: read('maxResidentSessions') as number | undefined,
    logLevel: read('logLevel') as LogLevel,
    vercelConnect: Boolean(read('vercelOidcToken')) || read('vercel') === '1',
  };
  return Object.freeze(settings);
}
