import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express, { type RequestHandler } from 'express';
import {
  answerClientError,
  assertRouteAuth,
  createCompatServer,
  isWebSocketUpgrade,
  MemoryJournal,
  RedisJournal,
  resolveMode,
  RedisSessionCluster,
  SqliteJournal,
  type CompatServer,
  type Logger,
  type Mode,
  type SiteOptions,
} from '@eve-flue/compat-server';
import {
  ConnectionRegistry,
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
  type FlueConnectionDefinition,
  type Sealer,
  type ConnectionStatus,
  type SignInBackend,
} from '@eve-flue/connections';
import { FlueRuntime } from '@eve-flue/flue-adapter';
import type { BridgeConfig } from './config.ts';
import { connectionRoutes } from './connection-routes.ts';
import { prepareDataDir, restrictDataFiles } from './data-dir.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { webPage } from './web-page.ts';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export interface RunningBridge {
  url: string;
  /** The origin links and the OAuth redirect URI are built from. */
  publicUrl: string;
  server: Server;
  compat: CompatServer;
  connections: ConnectionRegistry;
  broker: SignInBroker;
  authStore: AuthStore;
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
}

/**
 * Starts the bridge. It listens first, so that its public URL (and with it the OAuth redirect
 * URI) is known before anything is built; requests before it is ready get a 503.
 */
export async function startBridge(config: Readonly<BridgeConfig>, { logger }: StartOptions): Promise<RunningBridge> {
  const mode = resolveMode(config.mode);
  // Refuse before anything starts: nothing to clean up after a configuration that cannot run.
  assertRouteAuth(mode, config.auth);
  const dataDir = config.dataDir ?? process.env.DATA_DIR ?? '.data';
  const durable = config.store !== 'memory';
  const host = config.host ?? process.env.HOST ?? '127.0.0.1';

  // A plain Node response until the app is assembled (and again while it closes): no express methods.
  const unavailable = (why: string): RequestHandler => (_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'retry-after': '1' });
    response.end(JSON.stringify({ ok: false, code: 'service_unavailable', error: `The bridge is ${why}.` }));
  };
  let handler = unavailable('starting');
  const server = createServer((request, response) =>
    handler(request as express.Request, response as express.Response, () => {
      // Nothing in the app answered (a path outside /eve/v1 with no page to serve).
      if (!response.headersSent) response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: false, code: 'not_found', error: 'No such route.' }));
    }),
  );
  server.on('clientError', answerClientError); // a request Node cannot parse still gets Eve's error shape
  server.listen(config.port ?? Number(process.env.PORT ?? 3000), host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}`;
  const publicUrl = (config.publicUrl ?? process.env.PUBLIC_URL ?? `http://${LOOPBACK_HOSTS.has(host) ? host : 'localhost'}:${port}`).replace(/\/+$/, '');
  const site = { publicUrl, ...(LOOPBACK_HOSTS.has(host) ? { loopbackPort: port } : {}) };
  try {
    if (durable) prepareDataDir(dataDir);
    const ready = await assemble(config, { mode, dataDir, durable, publicUrl, site, logger });
    if (durable) restrictDataFiles(dataDir);
    handler = ready.app;
    Object.assign(server, { shouldUpgradeCallback: isWebSocketUpgrade }); // other upgrades (h2c) stay requests
    server.on('upgrade', ready.parts.compat.handleUpgrade);
    return {
      url,
      publicUrl,
      server,
      ...ready.parts,
      async close() {
        handler = unavailable('shutting down');
        await ready.parts.compat.closeWebSockets();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await ready.parts.compat.close();
        await ready.parts.authStore.close();
        await ready.parts.signInEvents?.close();
      },
    };
  } catch (error) {
    server.close();
    throw error;
  }
}

interface Settings {
  mode: Mode;
  dataDir: string;
  durable: boolean;
  publicUrl: string;
  site: SiteOptions;
  logger: Logger;
}

/** Everything behind the listening socket: sign-ins, connections, the Flue runtime, the routes. */
async function assemble(config: Readonly<BridgeConfig>, { mode, dataDir, durable, publicUrl, site, logger }: Settings) {
  const redis = typeof config.store === 'object' ? config.store : undefined;
  const tokenKey = config.tokenKey ?? process.env.BRIDGE_TOKEN_KEY;
  if (redis && !tokenKey) {
    throw new Error('[eve-flue] a Redis store needs BRIDGE_TOKEN_KEY (or `tokenKey`): every instance must open the tokens the others sealed.');
  }
  const sealer = loadSealer({
    production: mode === 'production',
    ...(tokenKey ? { base64Key: tokenKey } : {}),
    ...(durable ? { file: join(dataDir, 'token.key') } : {}),
  });
  const shared = redis ? await sharedStores(redis.redis, redis.prefix ?? 'eve:', sealer) : undefined;
  const authStore: AuthStore = shared?.authStore ?? new SqliteAuthStore(durable ? join(dataDir, 'connections.db') : ':memory:', sealer);
  const definitions = config.connections ?? [];
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

  const runtime = await FlueRuntime.start({
    agent: config.agent,
    modelId: config.modelId ?? 'unknown',
    connections,
    mountConnection: (name, session) => {
      const definition = connections.definition(name);
      if (!broker.handles(name)) return flueMountFor(definition);
      // A server that hid its tools until someone signed in shows them now: learn their names.
      const learnTools = (token: string) =>
        void connections.relist(name, flueMountFor(definition, { authorizer: fixedTokenAuthorizer(token) }).fetch).catch((error: unknown) => {
          logger.warn({ err: error, connection: name }, 'could not list tools after a sign-in');
        });
      return flueMountFor(definition, { authorizer: createConnectionAuthorizer(definition, broker, session, learnTools), parkedForMs: broker.flowTtlMs });
    },
    logger,
    ...(config.providers ? { providers: config.providers } : {}),
    ...(durable ? { dataDir } : {}),
  });
  const compat = await createCompatServer({
    runtime,
    journal: shared?.journal ?? (durable ? new SqliteJournal(join(dataDir, 'journal.db')) : new MemoryJournal()),
    ...(shared ? { cluster: shared.cluster } : {}),
    logger,
    mode,
    site,
    publicRoutes: oauthRoutes(broker, logger, publicUrl.startsWith('https:')),
    routes: connectionRoutes(connections, broker),
    ...(config.auth ? { auth: config.auth } : {}),
    ...(config.cors !== undefined ? { cors: config.cors } : {}),
    ...(config.limits ? { limits: config.limits } : {}),
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(compat.app);
  if (config.webPage ?? mode !== 'production') app.use(webPage());
  return { app, parts: { compat, connections, broker, authStore, signInEvents: shared?.signInEvents } };
}

/** The Redis pieces several instances share; Redis is checked reachable before the bridge starts. */
async function sharedStores(url: string, prefix: string, sealer: Sealer) {
  const cluster = new RedisSessionCluster(url, { prefix });
  // Appends are fenced by the session's lease: an instance that lost a session cannot write to it.
  const journal = new RedisJournal(url, { prefix, holder: cluster.instanceId });
  await journal.ready();
  const signInEvents = new RedisSignInEvents(url, prefix);
  await Promise.all([cluster.ready(), signInEvents.ready()]);
  return { journal, cluster, signInEvents, authStore: new RedisAuthStore(url, sealer, prefix) };
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
    logger.warn({ connection: definition.name, fallback: definition.auth ? 'oauth2' : 'none' }, reason);
    if (!definition.auth) return { missing: reason };
  }
  return definition.auth ? { backend: new OAuth2Backend(definition, store) } : {};
}

function logConnections(logger: Logger, statuses: ConnectionStatus[]): void {
  for (const status of statuses) {
    if (status.state === 'ready') logger.info({ connection: status.name, tools: status.tools }, 'connection ready');
    else logger.warn({ connection: status.name, state: status.state, missing: status.missing }, 'connection not ready');
  }
}
