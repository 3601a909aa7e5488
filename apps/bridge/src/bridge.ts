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
  RedisSessionCluster,
  SqliteJournal,
  type CompatServer,
  type Logger,
  sendRefusal,
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
import { EVE_BASE_PATH, isLoopbackHostname } from '@eve-flue/eve-protocol';
import { FlueRuntime } from '@eve-flue/flue-adapter';
import type { BridgeConfig } from './config.ts';
import { connectionRoutes } from './connection-routes.ts';
import { prepareDataDir, restrictDataFiles } from './data-dir.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { flueStoreFor } from './flue-store.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { startOps, type Ops } from './ops/index.ts';
import { resolveSettings, type BridgeSettings, type Env } from './settings.ts';
import { webPage } from './web-page.ts';

export interface RunningBridge extends Bridge {
  url: string;
  server: Server;
}

/** A bridge not yet bound to a server: mount `app` at any path and route upgrades to `handleUpgrade`. */
export interface Bridge extends AsyncDisposable {
  /** The origin (and path, when mounted under one) links and the OAuth redirect URI are built from. */
  publicUrl: string;
  /** Every setting as resolved once at start, from the config, the environment and the defaults. */
  settings: Readonly<BridgeSettings>;
  /** Where the bridge logs: the one given, else pino JSON lines at `LOG_LEVEL`. */
  logger: Logger;
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
  /** Closes the streams, sessions, Flue runtime and stores; the server it is mounted in is the caller's. Also `await using`. */
  close(): Promise<void>;
}

export interface CreateBridgeOptions {
  /** Default: pino JSON lines on stdout at `LOG_LEVEL` (default info). */
  logger?: Logger;
  /** Where settings the config leaves out are read from (PORT, PUBLIC_URL, ...). Default: `process.env`. */
  env?: Env;
}

export type StartOptions = CreateBridgeOptions;

/**
 * Builds a bridge to mount into an existing server. Its public URL (the OAuth redirect base)
 * must be known up front: `publicUrl`, else `PUBLIC_URL`, including the path it is mounted at.
 */
export async function createBridge(config: Readonly<BridgeConfig>, options: CreateBridgeOptions = {}): Promise<Bridge> {
  return bridgeFromSettings(resolveSettings(config, options.env), options.logger);
}

/** `createBridge` on settings already resolved (`check` resolves them itself, then swaps the store). */
export async function bridgeFromSettings(settings: Readonly<BridgeSettings>, logger?: Logger): Promise<Bridge> {
  const { publicUrl } = settings;
  if (!publicUrl) {
    throw new ConfigurationError('[eve-flue] createBridge needs `publicUrl` (or PUBLIC_URL): the URL it is mounted at, e.g. https://app.example.com/agents');
  }
  // Mounted on a loopback URL (local development), the loopback names on that port are the site too.
  const { hostname, port, protocol } = new URL(publicUrl);
  const loopback = isLoopbackHostname(hostname) ? { loopbackPort: Number(port || (protocol === 'https:' ? 443 : 80)) } : {};
  return buildBridge(settings, { publicUrl, ...loopback }, logger ?? loggerFor(settings));
}

async function buildBridge(settings: Readonly<BridgeSettings>, site: SiteOptions, logger: Logger): Promise<Bridge> {
  const { publicUrl } = site;
  // Refuse before anything starts: nothing to clean up after a configuration that cannot run.
  assertRouteAuth(settings.mode, settings.auth);
  // Every part is closed through this stack, in the reverse order it was built.
  const lifecycle = new AsyncDisposableStack();
  try {
    // Opened once per instance and shared by every store; checked reachable before the bridge starts.
    const redis = settings.store.kind === 'redis' ? { connections: lifecycle.adopt(new RedisConnections(settings.store.url), (c) => c.close()), prefix: settings.store.prefix } : undefined;
    const ops = lifecycle.adopt(await startOps({ logger, ...(redis ? { redis: redis.connections } : {}), ...(settings.metricsPort !== undefined ? { metricsPort: settings.metricsPort } : {}) }), (o) => o.close());
    const durable = settings.store.kind !== 'memory';
    if (durable) prepareDataDir(settings.dataDir);
    // The journal, tokens and Flue's conversations live in the folder unless Redis holds them.
    if (durable && !redis) lifecycle.adopt(lockDataDir(settings.dataDir), (lock) => lock.release());
    const { app, parts } = await assemble(settings, { durable, site, logger, ops, redis, lifecycle });
    if (durable) restrictDataFiles(settings.dataDir);
    const { compat } = parts;
    ops.readiness.markReady();
    const closing = lifecycle.move();
    const close = () => closing.disposeAsync();
    const bridge: Bridge = {
      publicUrl,
      settings,
      logger,
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
        const graceMs = settings.shutdownGraceMs;
        ops.readiness.startDraining();
        logger.info({ working: compat.activeSessions(), graceMs }, 'draining: no new turns; running ones get the grace period');
        const finished = await compat.quiesce(graceMs);
        if (!finished) logger.warn({ working: compat.activeSessions() }, 'turns still running after the grace period end as interrupted');
        await compat.endStreams();
        // Through `this`, so that a bridge with its own server (startBridge) closes that too.
        await this.close();
      },
      close,
      [Symbol.asyncDispose]: close,
    };
    return bridge;
  } catch (error) {
    await lifecycle.disposeAsync();
    throw error;
  }
}

/**
 * Starts the bridge on its own server. It listens first, so that its public URL (and with it the
 * OAuth redirect URI) is known before anything is built; requests before it is ready get a 503.
 */
export async function startBridge(config: Readonly<BridgeConfig>, options: StartOptions = {}): Promise<RunningBridge> {
  const settings = resolveSettings(config, options.env);
  const logger = options.logger ?? loggerFor(settings);
  // Refuse before anything listens: nothing to clean up after a configuration that cannot run.
  assertRouteAuth(settings.mode, settings.auth);
  const { host } = settings;

  // A plain Node response until the app is assembled (and again while it closes): no express methods.
  const unavailable = (why: string): RequestHandler => (_request, response) => {
    sendRefusal(response, 'service_unavailable', `The bridge is ${why}.`, { headers: { 'retry-after': '1' } });
  };
  let handler = unavailable('starting');
  const server = createServer((request, response) =>
    handler(request as express.Request, response as express.Response, () => {
      // Nothing in the app answered (a path outside /eve/v1 with no page to serve).
      if (!response.headersSent) sendRefusal(response, 'not_found', 'No such route.');
      else response.end();
    }),
  );
  server.on('clientError', answerClientError); // a request Node cannot parse still gets Eve's error shape
  server.listen(settings.port, host.address);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.inUrl}:${port}`;
  const publicUrl = settings.publicUrl ?? `http://${host.loopback ? host.inUrl : 'localhost'}:${port}`;
  let bridge: Bridge;
  try {
    bridge = await buildBridge(settings, { publicUrl, ...(host.loopback ? { loopbackPort: port } : {}) }, logger);
  } catch (error) {
    server.close();
    throw error;
  }
  handler = bridge.app;
  Object.assign(server, { shouldUpgradeCallback: isWebSocketUpgrade }); // other upgrades (h2c) stay requests
  server.on('upgrade', bridge.compat.handleUpgrade);
  // Disposed last first: refuse requests and close WebSockets, then the server, then the bridge.
  const lifecycle = new AsyncDisposableStack();
  lifecycle.use(bridge);
  lifecycle.defer(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  lifecycle.defer(async () => {
    handler = unavailable('shutting down');
    await bridge.compat.closeWebSockets();
  });
  const close = () => lifecycle.disposeAsync();
  return { ...bridge, url, server, close, [Symbol.asyncDispose]: close };
}

/** pino JSON lines on stdout at the resolved `LOG_LEVEL`. */
export function loggerFor(settings: Pick<BridgeSettings, 'logLevel'>): Logger {
  return pino({ level: settings.logLevel, base: { service: 'eve-flue-bridge' } });
}

interface AssemblyContext {
  durable: boolean;
  site: SiteOptions;
  logger: Logger;
  ops: Ops;
  redis: SharedRedis | undefined;
  /** Where each part that needs closing is put as it is built. */
  lifecycle: AsyncDisposableStack;
}

/** The instance's Redis connections and the key prefix every store on them uses. */
interface SharedRedis {
  connections: RedisConnections;
  prefix: string;
}

/** Everything behind the listening socket: sign-ins, connections, the Flue runtime, the routes. */
async function assemble(settings: Readonly<BridgeSettings>, { durable, site, logger, ops, redis, lifecycle }: AssemblyContext) {
  const { dataDir, mode, tokenKey } = settings;
  const { publicUrl } = site;
  if (redis && !tokenKey) {
    throw new ConfigurationError('[eve-flue] a Redis store needs BRIDGE_TOKEN_KEY (or `tokenKey`): every instance must open the tokens the others sealed.');
  }
  const sealer = loadSealer({
    production: mode === 'production',
    ...(tokenKey ? { base64Key: tokenKey } : {}),
    ...(durable ? { file: join(dataDir, 'token.key') } : {}),
  });
  // Before the stores' check: Flue's transaction connection is one of the connections it checks.
  const flueStore = flueStoreFor(redis, settings.flueDb);
  const shared = redis ? await sharedStores(redis, sealer, lifecycle) : undefined;
  const authStore: AuthStore = shared?.authStore ?? lifecycle.adopt(new SqliteAuthStore(durable ? join(dataDir, 'connections.db') : ':memory:', sealer), (store) => store.close());
  // A function: each caller's set is resolved when their session starts (connection-sets.ts).
  const definitions = typeof settings.connections === 'function' ? [] : settings.connections;
  const backends = new Map<string, SignInBackend>();
  const setupNotes = new Map<string, string>();
  for (const definition of definitions) {
    const choice = signInBackend(definition, authStore, logger, settings.vercelConnect);
    if (choice.backend) backends.set(definition.name, choice.backend);
    if (choice.missing) setupNotes.set(definition.name, choice.missing);
  }
  const broker = new SignInBroker({
    store: authStore,
    backends,
    publicUrl,
    ...(settings.signInTtlMs ? { flowTtlMs: settings.signInTtlMs } : {}),
    ...(shared ? { events: shared.signInEvents } : {}),
  });

  const connections = new ConnectionRegistry(definitions, (definition) => flueMountFor(definition).fetch);
  for (const [name, missing] of setupNotes) connections.requireSetup(name, missing);
  logConnections(logger, await connections.refresh());
  const sets = typeof settings.connections === 'function' ? perCallerSets(settings.connections) : undefined;

  // Closed here until the compat server, which closes them itself, is built.
  const handedOver = lifecycle.use(new AsyncDisposableStack());
  const runtime = await FlueRuntime.start({
    agent: settings.agent,
    tools: settings.tools,
    modelId: settings.modelId,
    connections,
    ...(sets ? { callerConnections: sets } : {}),
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
    ...(settings.providers ? { providers: settings.providers } : {}),
    ...(durable ? { dataDir } : {}),
    ...(flueStore.db ? { db: flueStore.db } : {}),
    ...(flueStore.generations ? { generations: flueStore.generations } : {}),
    ...(shared ? { holds: (sessionId: string) => shared.cluster.holds(sessionId) } : {}),
  });
  handedOver.defer(() => runtime.close());
  const journal = shared?.journal ?? (durable ? new SqliteJournal(join(dataDir, 'journal.db')) : new MemoryJournal());
  handedOver.defer(() => journal.close());
  const compat = await createCompatServer({
    runtime,
    journal: ops.metrics.timedJournal(journal),
    ...(shared ? { cluster: shared.cluster } : {}),
    logger,
    mode,
    site,
    publicRoutes: oauthRoutes(broker, logger, publicUrl.startsWith('https:'), (outcome) => ops.metrics.signIn(outcome)),
    routes: connectionRoutes(connections, broker, sets),
    ...(settings.auth ? { auth: settings.auth } : {}),
    ...(settings.sessions ? { sessionOwner: settings.sessions.owner } : {}),
    ...(settings.cors !== undefined ? { cors: settings.cors } : {}),
    ...(settings.limits ? { limits: settings.limits } : {}),
    ...(settings.streamLeaseMs ? { stream: { leaseMs: settings.streamLeaseMs } } : {}),
    ...(settings.idleSessionMs !== undefined ? { idleSessionMs: settings.idleSessionMs } : {}),
    ...(settings.maxResidentSessions !== undefined ? { maxResidentSessions: settings.maxResidentSessions } : {}),
    ...(settings.trustedForwarders ? { trustedForwarders: settings.trustedForwarders } : {}),
    // Callbacks owed to remote-agent parents live where the journal does: with Redis any instance can deliver them.
    callbackStore: redis
      ? new RedisCallbackStore(redis.connections, { prefix: redis.prefix })
      : durable
        ? new SqliteCallbackStore(join(dataDir, 'callbacks.db'))
        : new MemoryCallbackStore(),
    observer: ops.observer,
    ...(settings.mcp ? { mcp: settings.mcp } : {}),
    newTurnRefusal: () => ops.readiness.newTurnRefusal(),
  });
  // The compat server closes the runtime and the journal now.
  void handedOver.move();
  lifecycle.adopt(compat, (server) => server.close());
  ops.metrics.countActiveSessions(() => compat.activeSessions());
  ops.metrics.countResidentSessions(() => compat.residentSessions());

  const app = express();
  app.disable('x-powered-by');
  app.use(ops.accessLog, ops.readiness.route(), ops.readiness.refuseNewTurns(), compat.app);
  if (settings.webPage) app.use(webPage());
  return { app, parts: { compat, connections, broker, authStore } };
}

/** The Redis pieces several instances share, on this instance's connections; Redis is checked once, before the bridge starts. */
async function sharedStores({ connections, prefix }: SharedRedis, sealer: Sealer, lifecycle: AsyncDisposableStack) {
  const cluster = new RedisSessionCluster(connections, { prefix });
  // Appends are fenced by the session's lease: an instance that lost a session cannot write to it.
  const journal = new RedisJournal(connections, { prefix, fence: cluster.fence });
  const signInEvents = lifecycle.adopt(new RedisSignInEvents(connections.commands, connections.channels, prefix), (events) => events.close());
  const authStore = lifecycle.adopt(new RedisAuthStore(connections.commands, sealer, prefix), (store) => store.close());
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
  vercelConnect: boolean,
): { backend?: SignInBackend; missing?: string } {
  if (definition.connector) {
    if (vercelConnect) {
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

function logConnections(logger: Logger, statuses: ConnectionStatus[]): void {
  for (const status of statuses) {
    if (status.state === 'ready') logger.info({ connection: status.name, tools: status.tools }, 'connection ready');
    else logger.warn({ connection: status.name, state: status.state, missing: status.missing }, 'connection not ready');
  }
}
