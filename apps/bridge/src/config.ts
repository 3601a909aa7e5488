import type { ToolDefinition } from '@flue/runtime';
import type { PersistenceAdapter } from '@flue/runtime/adapter';
import type { CompatServerOptions, McpChannelOptions, Mode, RequestLimits, RouteAuthPolicy, SessionOwnerPolicy, TrustedForwarders } from '@eve-flue/compat-server';
import type { ConnectionSetResolver, FlueConnectionDefinition } from '@eve-flue/connections';
import { checkedTools, type FlueAgent, type FlueRuntimeOptions } from '@eve-flue/flue-adapter';
import { checkConfig } from './settings.ts';

export interface BridgeConfig {
  /** The Flue agent to serve. */
  agent: FlueAgent;
  /** Model providers for Flue; omit for Flue's built-in providers (which read their API keys from the environment). */
  providers?: FlueRuntimeOptions['providers'];
  /**
   * The agent's own Flue tools (`defineTool` from `@flue/runtime`): the bridge mounts them on the
   * agent for every turn (do not also `useTool` them in the agent), and `mcp: { tools: true }`
   * publishes them. Listed here because Flue has no API to read the tools a render mounts.
   */
  tools?: readonly ToolDefinition[];
  /** Model shown by `/eve/v1/info` before the first model call. */
  modelId?: string;
  /**
   * MCP connections the bridge mounts on the agent, from `defineFlueConnection`; or a function
   * `({ principal, sessionId }) => definitions` resolved per caller when a session starts.
   */
  connections?: readonly Readonly<FlueConnectionDefinition>[] | ConnectionSetResolver;
  /**
   * `sqlite` (default): durable, in `dataDir`, for one process. `memory`: gone with the process.
   * `{ redis: url }`: sessions, sign-ins and tokens in Redis, shared by every instance that
   * names the same Redis and prefix; any instance then serves any request.
   */
  store?: 'sqlite' | 'memory' | RedisStore;
  /**
   * Where Flue keeps the agent's conversations: any Flue persistence adapter (what a Flue
   * project's `db.ts` exports). Default: with a Redis `store`, that Redis under the same prefix;
   * otherwise SQLite in `dataDir` (`flue.db`), or memory with `store: 'memory'`.
   */
  flueDb?: PersistenceAdapter;
  /** Default: `DATA_DIR` from the environment, else `./.data`. */
  dataDir?: string;
  /** Default: `PORT` from the environment, else 3000. */
  port?: number;
  /** Interface to listen on. Default: `HOST` from the environment, else 127.0.0.1. */
  host?: string;
  /**
   * The bridge's public URL (with the path it is mounted at, if any), for links it hands out and
   * the OAuth redirect URI; only requests whose `Host` names it (or a loopback name, when bound to
   * loopback) are served, others get 421. Default: `PUBLIC_URL`, else http://<host>:<port>
   * (localhost when the host is not loopback); `createBridge` needs one of the two.
   */
  publicUrl?: string;
  /** Default `development`; NODE_ENV=production (any case) means production whatever this says. Production requires `auth`. */
  mode?: Mode;
  /**
   * Route auth for every route but health: one strategy (`oidc`, `jwtHmac`, `jwtEcdsa`, `httpBasic`,
   * `bearerTokens`, `localDev`, `none`, or your own function) or several, tried in order.
   */
  auth?: RouteAuthPolicy;
  /**
   * `{ owner: 'principal' }`: a session is readable, followable, writable and controllable only by
   * the principal that created it; anyone else gets 404. Default: anyone route auth admits (Eve's behaviour).
   */
  sessions?: { owner: SessionOwnerPolicy };
  /** Which browser origins may call the bridge. Default: the origins `CORS_ORIGINS` lists (comma-separated), else none. */
  cors?: CompatServerOptions['cors'];
  /** Serve the demo web page at `/`. Default: true in development. */
  webPage?: boolean;
  /**
   * Key that seals tokens at rest: 32 bytes, base64. Default: `BRIDGE_TOKEN_KEY`; in development a
   * key generated into `<dataDir>/token.key` (mode 600). Production without one refuses to start.
   */
  tokenKey?: string;
  /** How long a sign-in may take before it times out. Default 10 minutes. */
  signInTtlMs?: number;
  /**
   * Serve Prometheus metrics at `http://127.0.0.1:<metricsPort>/metrics` (loopback only; 0 picks
   * a free port). Default: `METRICS_PORT` from the environment; no metrics listener without it.
   */
  metricsPort?: number;
  /** On SIGTERM, how long running turns get to finish before they end as interrupted. Default: `SHUTDOWN_GRACE_MS`, else 10 s. */
  shutdownGraceMs?: number;
  /** What one request may carry (text, parts, body bytes, nesting); defaults in docs/security.md. */
  limits?: Partial<RequestLimits>;
  /** How long one NDJSON stream response lasts before its reader reconnects to resume it. Default 60 s. */
  streamLeaseMs?: number;
  /**
   * Whether the route-authenticated caller (`forwarder`, e.g. an Eve app whose
   * `defineRemoteAgent` sets `forwardPrincipal: true`) may run turns as the principal it asserts
   * (`assertion.principal.current`, in Eve's shape). Without it a forwarded principal is refused (403).
   */
  trustedForwarders?: TrustedForwarders;
  /**
   * Serve Eve's MCP channel to MCP hosts: `{}` for the four `agent_*` tools, `{ tools: true }` to
   * publish the agent's tools too, `route` to move it (default `/eve/v1/mcp`), `oauth` to advertise
   * the authorization server whose tokens route auth accepts. Off when absent.
   */
  mcp?: McpChannelOptions;
  /**
   * How long a session with no running turn, no open stream and no pending sign-in or approval
   * stays in memory (its agent instance, MCP clients, caches: about 40 KiB of heap for a one-turn
   * session, more with a long conversation) before it is evicted; its next message reloads it from the stores, which
   * costs that message a few milliseconds and a new MCP session per connection. Default:
   * `IDLE_SESSION_MS`, else 5 minutes. 0 evicts a session as soon as it is idle.
   */
  idleSessionMs?: number;
  /**
   * The most sessions held in memory; past it the least recently used idle ones are evicted at
   * once (sessions at work are never evicted, so the count can pass it while they work). Bounds
   * memory at about this many times a session's cost. Default: `MAX_RESIDENT_SESSIONS`, else 1,000.
   */
  maxResidentSessions?: number;
}

export interface RedisStore {
  redis: string;
  /** Key prefix, to keep deployments apart on one Redis. Default `eve:`. */
  prefix?: string;
}

/** Validates and freezes a bridge configuration; a typo fails at startup, naming the field. */
export function defineBridgeConfig(config: BridgeConfig): Readonly<BridgeConfig> {
  checkConfig(config);
  // A list of strategies is copied and frozen with the rest: no later push can admit anyone.
  return Object.freeze({ ...config, ...(Array.isArray(config.auth) ? { auth: Object.freeze([...config.auth]) } : {}), ...(config.tools ? { tools: checkedTools(config.tools) } : {}) });
}
