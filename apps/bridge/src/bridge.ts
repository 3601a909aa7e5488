import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import express, { type RequestHandler } from 'express';
import pino from 'pino';
import {
  answerClientError,
  assertRouteAuth,
  ConfigurationError,
  createCompatServer,
  MemoryCallbackStore,
  RedisCallbackStore,
  SqliteCallbackStore,
  isWebSocketUpgrade,
  MemoryJournal,
  RedisConnections,
  RedisJournal,
  resolveMode,
  RedisSessionCluster,
  SqliteJournal,
  type CompatServer,
  type Logger,
  type Mode,
  type Principal,
  type SiteOptions,
} from '@eve-flue/compat-server';
import {
  ConnectionRegistry,
  ConnectionSets,
  createConnectionAuthorizer,
  fixedTokenAuthorizer,
  flueMountFor,
  loadSealer,
  OAuth2Backend,
  RedisAuthStore,
  RedisSignInEvents,
  SignInBroker,
  SqliteAuthStore,
  VercelConnectBackend,
  type AuthStore,
  type ConnectionSetResolver,
  type FlueConnectionDefinition,
  type Sealer,
  type ConnectionStatus,
  type SessionScope,
  type SignInBackend,
} from '@eve-flue/connections';
import { errorBody, EVE_BASE_PATH } from '@eve-flue/eve-protocol';
import { FlueRuntime } from '@eve-flue/flue-adapter';
import { defineBridgeConfig, type BridgeConfig } from './config.ts';
import { connectionRoutes } from './connection-routes.ts';
import { prepareDataDir, restrictDataFiles } from './data-dir.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { flueStoreFor } from './flue-store.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { startOps, type Ops } from './ops/index.ts';
import { webPage } from './web-page.ts';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
/** How long running turns get to finish when the bridge drains. */
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export interface RunningBridge extends Bridge {
  url: string;
  server: Server;
}

/** A bridge not yet bound to a server: mount `app` at any path and route upgrades to `handleUpgrade`. */
export interface Bridge {
  /** The origin (and path, when mounted under one) links and the OAuth redirect URI are built from. */
  publicUrl: string;
  /** Serves `/eve/v1` (and the demo page, when on); mount it with `server.use('/any/prefix', bridge.app)`. */
  app: express.Express;
  /**
   * An http server's `'upgrade'` listener for the WebSocket streams under the path `app` is mounted
   * at. Returns false, touching nothing, for an upgrade outside it (another listener may own it).
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  compat: CompatServer;
  connections: ConnectionRegistry;
  broker: SignInBroker;
  authStore: AuthStore;
  /** `/metrics` on the loopback interface, when `metricsPort` is set. */
  metricsUrl?: string;
  /**
   * Graceful shutdown (SIGTERM): readiness fails and new turns are refused at once; running turns
   * get `shutdownGraceMs` to finish; then every stream ends resumably (readers reconnect
   * elsewhere), turns still running end as interrupted, leases are released and stores closed.
   */
  drain(): Promise<void>;
  /** Closes the streams, sessions, Flue runtime and stores; the server it is mounted in is the caller's. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
}

export interface CreateBridgeOptions {
  /** Default: pino JSON lines on stdout at `LOG_LEVEL` (default info). */
  logger?: Logger;
}

/**
 * Builds a bridge to mount into an existing server. Its public URL (the OAuth redirect base)
 * must be known up front: `publicUrl`, else `PUBLIC_URL`, including the path it is mounted at.
 */
export async function createBridge(config: Readonly<BridgeConfig>, options: CreateBridgeOptions = {}): Promise<Bridge> {
  const publicUrl = config.publicUrl ?? process.env.PUBLIC_URL;
  if (!publicUrl) {
    throw new ConfigurationError('[eve-flue] createBridge needs `publicUrl` (or PUBLIC_URL): the URL it is mounted at, e.g. https://app.example.com/agents');
  }
  if (!URL.canParse(publicUrl)) throw new ConfigurationError(`[eve-flue] PUBLIC_URL: "${publicUrl}" is not an absolute URL`);
  // Mounted on a loopback URL (local development), the loopback names on that port are the site too.
  const { hostname, port } = new URL(publicUrl);
  const loopback = LOOPBACK_HOSTS.has(hostname.replace(/^\[|\]$/g, '')) ? { loopbackPort: Number(port || 80) } : {};
  // Validated here too: an author may hand over a plain object rather than defineBridgeConfig's.
  return buildBridge(defineBridgeConfig(config), { publicUrl, ...loopback }, options.logger ?? defaultLogger());
}

async function buildBridge(config: Readonly<BridgeConfig>, given: SiteOptions, logger: Logger): Promise<Bridge> {
  const publicUrl = given.publicUrl.replace(/\/+$/, '');
  const site: SiteOptions = { ...given, publicUrl };
  const mode = resolveMode(config.mode);
  // Refuse before anything starts: nothing to clean up after a configuration that cannot run.
  assertRouteAuth(mode, config.auth);
  const dataDir = config.dataDir ?? process.env.DATA_DIR ?? '.data';
  const durable = config.store !== 'memory';
  // Opened once per instance and shared by every store; checked reachable before the bridge starts.
  const redis = typeof config.store === 'object' ? { connections: new RedisConnections(config.store.redis), prefix: config.store.prefix ?? 'eve:' } : undefined;
  const metricsPort = config.metricsPort ?? (process.env.METRICS_PORT ? Number(process.env.METRICS_PORT) : undefined);
  const shutdownGraceMs = config.shutdownGraceMs ?? Number(process.env.SHUTDOWN_GRACE_MS ?? DEFAULT_SHUTDOWN_GRACE_MS);
  // Read before anything starts: a malformed one stops the bridge with nothing to clean up.
  const residency = residencySettings(config);
  const ops = await startOps({ logger, ...(redis ? { redis: redis.connections } : {}), ...(metricsPort !== undefined ? { metricsPort } : {}) });
  let assembled: Awaited<ReturnType<typeof assemble>>;
  let lock: DataDirLock | undefined;
  try {
    if (durable) prepareDataDir(dataDir);
    // The journal, tokens and Flue's conversations live in the folder unless Redis holds them.
    if (durable && !redis) lock = lockDataDir(dataDir);
    assembled = await assemble(config, { mode, dataDir, durable, publicUrl, site, logger, ops, redis, residency });
    if (durable) restrictDataFiles(dataDir);
  } catch (error) {
    lock?.release();
    await ops.close();
    await redis?.connections.close();
    throw error;
  }
  const { app, parts } = assembled;
  const { compat } = parts;
  ops.readiness.markReady();
  const close = async () => {
    await compat.close();
    await parts.authStore.close();
    await parts.signInEvents?.close();
    await ops.close();
    await redis?.connections.close();
    lock?.release();
  };
  const bridge: Bridge = {
    publicUrl,
    app,
    handleUpgrade(request, socket, head) {
      // `app.path()` is where the app is mounted ('' when it is the server's handler itself).
      const base = app.path();
      const url = request.url ?? '/';
      if (!url.startsWith(`${base}${EVE_BASE_PATH}/`)) return false;
      request.url = url.slice(base.length);
      compat.handleUpgrade(request, socket, head);
      return true;
    },
    ...parts,
    ...(ops.metricsUrl ? { metricsUrl: ops.metricsUrl } : {}),
    async drain() {
      ops.readiness.startDraining();
      logger.info({ working: compat.activeSessions(), graceMs: shutdownGraceMs }, 'draining: no new turns; running ones get the grace period');
      const finished = await compat.quiesce(shutdownGraceMs);
      if (!finished) logger.warn({ working: compat.activeSessions() }, 'turns still running after the grace period end as interrupted');
      await compat.endStreams();
      // Through `this`, so that a bridge with its own server (startBridge) closes that too.
      await this.close();
    },
    close,
  };
  return bridge;
}

/**
 * Starts the bridge on its own server. It listens first, so that its public URL (and with it the
 * OAuth redirect URI) is known before anything is built; requests before it is ready get a 503.
 */
export async function startBridge(config: Readonly<BridgeConfig>, { logger }: StartOptions): Promise<RunningBridge> {
  // Refuse before anything listens: nothing to clean up after a configuration that cannot run.
  assertRouteAuth(resolveMode(config.mode), config.auth);
  const host = config.host ?? process.env.HOST ?? '127.0.0.1';

  // A plain Node response until the app is assembled (and again while it closes): no express methods.
  const unavailable = (why: string): RequestHandler => (_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'retry-after': '1' });
    response.end(JSON.stringify(errorBody('service_unavailable', `The bridge is ${why}.`)));
  };
  let handler = unavailable('starting');
  const server = createServer((request, response) =>
    handler(request as express.Request, response as express.Response, () => {
      // Nothing in the app answered (a path outside /eve/v1 with no page to serve).
      if (!response.headersSent) response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(errorBody('not_found', 'No such route.')));
    }),
  );
  server.on('clientError', answerClientError); // a request Node cannot parse still gets Eve's error shape
  server.listen(config.port ?? Number(process.env.PORT ?? 3000), host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}`;
  const publicUrl = config.publicUrl ?? process.env.PUBLIC_URL ?? `http://${LOOPBACK_HOSTS.has(host) ? host : 'localhost'}:${port}`;
  try {
    const bridge = await buildBridge(config, { publicUrl, ...(LOOPBACK_HOSTS.has(host) ? { loopbackPort: port } : {}) }, logger);
    handler = bridge.app;
    Object.assign(server, { shouldUpgradeCallback: isWebSocketUpgrade }); // other upgrades (h2c) stay requests
    server.on('upgrade', bridge.compat.handleUpgrade);
    return {
      ...bridge,
      url,
      server,
      async close() {
        handler = unavailable('shutting down');
        await bridge.compat.closeWebSockets();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await bridge.close();
      },
    };
  } catch (error) {
    server.close();
    throw error;
  }
}

function defaultLogger(): Logger {
  return pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'eve-flue-bridge' } });
}

interface Settings {
  mode: Mode;
  dataDir: string;
  durable: boolean;
  publicUrl: string;
  site: SiteOptions;
  logger: Logger;
  ops: Ops;
  redis: SharedRedis | undefined;
  residency: ReturnType<typeof residencySettings>;
}

/** The instance's Redis connections and the key prefix every store on them uses. */
interface SharedRedis {
  connections: RedisConnections;
  prefix: string;
}

/** Everything behind the listening socket: sign-ins, connections, the Flue runtime, the routes. */
async function assemble(config: Readonly<BridgeConfig>, { mode, dataDir, durable, publicUrl, site, logger, ops, redis, residency }: Settings) {
  const tokenKey = config.tokenKey ?? process.env.BRIDGE_TOKEN_KEY;
  if (redis && !tokenKey) {
    throw new Error('[eve-flue] a Redis store needs BRIDGE_TOKEN_KEY (or `tokenKey`): every instance must open the tokens the others sealed.');
  }
  const sealer = loadSealer({
    production: mode === 'production',
    ...(tokenKey ? { base64Key: tokenKey } : {}),
    ...(durable ? { file: join(dataDir, 'token.key') } : {}),
  });
  // Before the stores' check: Flue's transaction connection is one of the connections it checks.
  const flueStore = flueStoreFor(redis, config.flueDb);
  const shared = redis ? await sharedStores(redis, sealer) : undefined;
  const authStore: AuthStore = shared?.authStore ?? new SqliteAuthStore(durable ? join(dataDir, 'connections.db') : ':memory:', sealer);
  // A function: each caller's set is resolved when their session starts (connection-sets.ts).
  const definitions = typeof config.connections === 'function' ? [] : (config.connections ?? []);
  const backends = new Map<string, SignInBackend>();
  const setupNotes = new Map<string, string>();
  for (const definition of definitions) {
    const choice = signInBackend(definition, authStore, logger);
    if (choice.backend) backends.set(definition.name, choice.backend);
    if (choice.missing) setupNotes.set(definition.name, choice.missing);
  }
  const broker = new SignInBroker({
    store: authStore,
    backends,
    publicUrl,
    ...(config.signInTtlMs ? { flowTtlMs: config.signInTtlMs } : {}),
    ...(shared ? { events: shared.signInEvents } : {}),
  });

  const connections = new ConnectionRegistry(definitions, (definition) => flueMountFor(definition).fetch);
  for (const [name, missing] of setupNotes) connections.requireSetup(name, missing);
  logConnections(logger, await connections.refresh());
  const sets = typeof config.connections === 'function' ? perCallerSets(config.connections) : undefined;

  const runtime = await FlueRuntime.start({
    agent: config.agent,
    modelId: config.modelId ?? 'unknown',
    connections,
    ...(sets ? { callerConnections: { for: (session, principal) => sets.for({ sessionId: session.sessionId, ...(principal ? { principal } : {}) }), forget: (sessionId) => sets.forget(sessionId) } } : {}),
    mountConnection: (definition, session) => {
      const name = definition.name;
      const context = () => ({ sessionId: session.sessionId, ...principalOf(session) });
      // A call waiting for a person (an approval) must not time out inside Flue meanwhile.
      const parkedForMs = broker.flowTtlMs;
      if (!broker.handles(name)) return { mount: ops.metrics.timedMount(flueMountFor(definition, { context, ...(definition.approval ? { parkedForMs } : {}) })) };
      // A server that hid its tools until someone signed in shows them now: learn their names for the status.
      const learnTools = (token: string) =>
        void connections.relist(name, flueMountFor(definition, { authorizer: fixedTokenAuthorizer(token), context }).fetch).catch((error: unknown) => {
          logger.warn({ err: error, connection: name }, 'could not list tools after a sign-in');
        });
      const signInFailed = (reason: string) => {
        connections.markSignInFailed(name, reason);
        logger.warn({ connection: name, reason }, 'sign-in could not start');
      };
      const authorizer = createConnectionAuthorizer(definition, broker, session, learnTools, signInFailed);
      return { mount: ops.metrics.timedMount(flueMountFor(definition, { authorizer, parkedForMs, context })), authorizer };
    },
    logger,
    ...(config.providers ? { providers: config.providers } : {}),
    ...(durable ? { dataDir } : {}),
    ...(flueStore.db ? { db: flueStore.db } : {}),
    ...(flueStore.generations ? { generations: flueStore.generations } : {}),
    ...(shared ? { holds: (sessionId: string) => shared.cluster.holds(sessionId) } : {}),
  });
  const compat = await createCompatServer({
    runtime,
    journal: ops.metrics.timedJournal(shared?.journal ?? (durable ? new SqliteJournal(join(dataDir, 'journal.db')) : new MemoryJournal())),
    ...(shared ? { cluster: shared.cluster } : {}),
    logger,
    mode,
    site,
    publicRoutes: oauthRoutes(broker, logger, publicUrl.startsWith('https:'), (outcome) => ops.metrics.signIn(outcome)),
    routes: connectionRoutes(connections, broker, sets),
    ...(config.auth ? { auth: config.auth } : {}),
    ...(config.sessions ? { sessionOwner: config.sessions.owner } : {}),
    ...corsSetting(config.cors),
    ...(config.limits ? { limits: config.limits } : {}),
    ...(config.streamLeaseMs ? { stream: { leaseMs: config.streamLeaseMs } } : {}),
    ...residency,
    ...(config.trustedForwarders ? { trustedForwarders: config.trustedForwarders } : {}),
    // Callbacks owed to remote-agent parents live where the journal does: with Redis any instance can deliver them.
    callbackStore: redis
      ? new RedisCallbackStore(redis.connections, { prefix: redis.prefix })
      : durable
        ? new SqliteCallbackStore(join(dataDir, 'callbacks.db'))
        : new MemoryCallbackStore(),
    observer: ops.observer,
    ...(config.mcp ? { mcp: config.mcp } : {}),
  });
  ops.metrics.countActiveSessions(() => compat.activeSessions());
  ops.metrics.countResidentSessions(() => compat.residentSessions());

  const app = express();
  app.disable('x-powered-by');
  app.use(ops.accessLog, ops.readiness.route(), ops.readiness.refuseNewTurns(), compat.app);
  if (config.webPage ?? mode !== 'production') app.use(webPage());
  return { app, parts: { compat, connections, broker, authStore, signInEvents: shared?.signInEvents } };
}

/** The Redis pieces several instances share, on this instance's connections; Redis is checked once, before the bridge starts. */
async function sharedStores({ connections, prefix }: SharedRedis, sealer: Sealer) {
  const cluster = new RedisSessionCluster(connections, { prefix });
  // Appends are fenced by the session's lease: an instance that lost a session cannot write to it.
  const journal = new RedisJournal(connections, { prefix, fence: cluster.fence });
  const signInEvents = new RedisSignInEvents(connections.commands, connections.channels, prefix);
  const authStore = new RedisAuthStore(connections.commands, sealer, prefix);
  // Every connection ready, and every channel above subscribed.
  await connections.ready();
  return { journal, cluster, signInEvents, authStore };
}

/**
 * How a connection's people sign in: Vercel Connect when it names a connector and Connect is
 * configured (a Vercel OIDC token is at hand); otherwise its own OAuth settings, if any.
 */
function signInBackend(
  definition: Readonly<FlueConnectionDefinition>,
  store: AuthStore,
  logger: Logger,
): { backend?: SignInBackend; missing?: string } {
  if (definition.connector) {
    if (process.env.VERCEL_OIDC_TOKEN || process.env.VERCEL === '1') {
      const onUnavailable = (reason: string) => logger.warn({ connection: definition.name }, reason);
      return { backend: new VercelConnectBackend(definition, { onUnavailable }) };
    }
    const reason = 'Vercel Connect is not configured: no Vercel OIDC token (set VERCEL_OIDC_TOKEN, e.g. with `vercel env pull`)';
    const oauth = definition.auth?.type === 'oauth2';
    logger.warn({ connection: definition.name, fallback: oauth ? 'oauth2' : 'none' }, reason);
    if (!oauth) return { missing: reason };
  }
  return definition.auth?.type === 'oauth2' ? { backend: new OAuth2Backend(definition, store) } : {};
}

/** Each caller's connections, resolved and listed for them (their credentials resolved for them too). */
function perCallerSets(resolve: ConnectionSetResolver): ConnectionSets {
  return new ConnectionSets(resolve, async (definitions, ctx) => {
    const caller = { ...(ctx.principal ? { principal: ctx.principal.id, auth: ctx.principal } : {}), ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}) };
    const registry = new ConnectionRegistry(definitions, (definition) => flueMountFor(definition, { context: () => caller }).fetch);
    await registry.refresh();
    return registry;
  });
}

/** The caller of the session's running turn, for credential resolvers: its id, and the whole principal. */
function principalOf(session: SessionScope): { principal?: string; auth?: Principal } {
  const principal = session.turn()?.principal;
  return principal === undefined ? {} : { principal: principal.id, auth: principal };
}

/** How long idle sessions stay in memory, and how many: the config's, else `IDLE_SESSION_MS` and `MAX_RESIDENT_SESSIONS`. */
function residencySettings(config: Readonly<BridgeConfig>): { idleSessionMs?: number; maxResidentSessions?: number } {
  const idleSessionMs = config.idleSessionMs ?? envCount('IDLE_SESSION_MS', 0);
  const maxResidentSessions = config.maxResidentSessions ?? envCount('MAX_RESIDENT_SESSIONS', 1);
  return { ...(idleSessionMs !== undefined ? { idleSessionMs } : {}), ...(maxResidentSessions !== undefined ? { maxResidentSessions } : {}) };
}

/** An integer setting from the environment, at least `min`; a malformed one stops the start, naming it. */
function envCount(name: string, min: number): number | undefined {
  const raw = process.env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new ConfigurationError(`[eve-flue] ${name}: "${raw}" must be an integer of at least ${min}`);
  return value;
}

/** The config's `cors`, else the origins `CORS_ORIGINS` lists (comma-separated), else off. */
function corsSetting(cors: BridgeConfig['cors']): { cors?: NonNullable<BridgeConfig['cors']> } {
  if (cors !== undefined) return { cors };
  const origins = (process.env.CORS_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter(Boolean);
  for (const origin of origins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigurationError(`[eve-flue] CORS_ORIGINS: "${origin}" is not an origin such as https://app.example.com`);
    }
  }
  return origins.length > 0 ? { cors: { origin: origins } } : {};
}

function logConnections(logger: Logger, statuses: ConnectionStatus[]): void {
  for (const status of statuses) {
    if (status.state === 'ready') logger.info({ connection: status.name, tools: status.tools }, 'connection ready');
    else logger.warn({ connection: status.name, state: status.state, missing: status.missing }, 'connection not ready');
  }
}
