import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import cors, { type CorsOptions } from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import { EVE_BASE_PATH, EXPOSED_HEADERS, ROUTES, type HealthBody } from '@eve-flue/eve-protocol';
import { requireRouteAuth } from './auth/middleware.ts';
import { sessionOwnership, type SessionOwnerPolicy } from './auth/ownership.ts';
import type { RouteAuthPolicy } from './auth/route-auth.ts';
import { LOCAL_DEV } from './auth/strategies/local.ts';
import { MemoryCallbackStore, SqliteCallbackStore, type CallbackStore } from './remote/callback-store.ts';
import { RemoteCallbacks } from './remote/callbacks.ts';
import type { TrustedForwarders } from './remote/forwarded-principal.ts';
import { errorHandler, notFound } from './http/errors.ts';
import { readJsonBody } from './http/json-body.ts';
import { resolveLimits, type RequestLimits } from './http/limits.ts';
import { DEFAULT_UPLOAD_POLICY, type UploadPolicy } from './http/message.ts';
import { sendRefusal } from './http/refusal.ts';
import { MISDIRECTED, site as siteOf, type SiteOptions } from './http/site.ts';
import type { Journal } from './journal/journal.ts';
import type { RequestError } from './session/errors.ts';
import { SqliteJournal } from './journal/sqlite.ts';
import { silentLogger, type Logger } from './logger.ts';
import type { ServerObserver } from './observer.ts';
import { mcpChannel, type McpChannelOptions } from './mcp/channel.ts';
import { agentInfo } from './routes/info.ts';
import { sessionRoutes } from './routes/sessions.ts';
import type { SessionCluster } from './session/cluster.ts';
import { ClusteredSessions } from './session/clustered-sessions.ts';
import { SessionManager } from './session/manager.ts';
import { SessionResidency, type EvictionReason } from './session/residency.ts';
import type { Sessions } from './session/sessions.ts';
import type { AgentRuntime } from '@eve-flue/session-contract';
import { NdjsonStreams, type StreamTimings } from './stream/ndjson-stream.ts';
import { webSocketStreams } from './stream/websocket.ts';
import { DEFAULT_WEBSOCKET_LIMITS, type WebSocketStreamLimits } from './stream/websocket-stream.ts';

export type Mode = 'development' | 'production';

export interface CompatServerOptions {
  runtime: AgentRuntime;
  /** Where events and sessions live. Default: SQLite at `<dataDir>/journal.db`. */
  journal?: Journal;
  /** Folder for the default journal. Default: `./.data`. */
  dataDir?: string;
  /** Default `development`; NODE_ENV=production (any case) makes it `production` whatever this says. */
  mode?: Mode;
  /** Who may call every route but health. Required in production; absent means anonymous in development. */
  auth?: RouteAuthPolicy;
  /** `principal`: a session is only for the principal that created it (others get 404). Default: anyone admitted. */
  sessionOwner?: SessionOwnerPolicy;
  /** Off by default. `true` allows any origin; both expose the headers the client reads. */
  cors?: boolean | CorsOptions;
  /** Reported by `/health`. */
  workflowId?: string;
  logger?: Logger;
  uploads?: Partial<UploadPolicy>;
  /** What one request may carry; defaults in `http/limits.ts` (`RequestLimits`). */
  limits?: Partial<RequestLimits>;
  /**
   * The server's public origin. Given, every request and WebSocket upgrade whose `Host` does not
   * name it (or a loopback name, when bound to loopback) gets 421, and a WebSocket's `Origin` is
   * compared with it. Absent (an app mounted elsewhere), `Host` is not checked and a WebSocket's
   * `Origin` is compared with `Host`.
   */
  site?: SiteOptions;
  /**
   * Stream timings and limits: `heartbeatMs` (default 10 s; NDJSON heartbeat lines and WebSocket
   * pings), `leaseMs` (default 60 s; leased NDJSON responses), `maxBufferedBytes` (default 1 MiB;
   * what a WebSocket stream queues for one reader before waiting for it) and `slowReaderGraceMs`
   * (default 5 s; how long a WebSocket reader over that gets to drain before it is closed with
   * 4008 and told where to resume).
   */
  stream?: Partial<StreamTimings & WebSocketStreamLimits>;
  /** How long an ended session's stream stays readable. Default: 7 days. */
  retentionMs?: number;
  /**
   * How long a session with no work and no open stream stays in memory (its agent instance, MCP
   * clients, caches) before it is evicted; its next message reloads it from the stores. Default 5 minutes.
   */
  idleSessionMs?: number;
  /** The most sessions kept in memory; past it the least recently used idle ones are evicted. Default 1,000. */
  maxResidentSessions?: number;
  /** Milliseconds since the epoch; replaceable so that retention can be tested without waiting. */
  clock?: () => number;
  /**
   * Several instances sharing one journal (Redis): who runs each session, and how commands reach
   * it. Absent for a single process.
   */
  cluster?: SessionCluster;
  /** More routes under `/eve/v1` that need no route auth (e.g. an OAuth callback a browser lands on). */
  publicRoutes?: RequestHandler;
  /** More routes under `/eve/v1` behind route auth, with JSON bodies parsed. */
  routes?: RequestHandler;
  /** Hears about streams and turns (metrics, access logs). */
  observer?: ServerObserver;
  /**
   * Whether the route-authenticated caller (`forwarder`) may run turns as the principal it
   * forwards (Eve's `defineRemoteAgent({ forwardPrincipal: true })`). Absent, a forwarded
   * principal is refused with 403.
   */
  trustedForwarders?: TrustedForwarders;
  /**
   * The ledger of callbacks owed to remote-agent parents. Default: SQLite at
   * `<dataDir>/callbacks.db` when the journal is the default one, else memory (pass one that
   * lasts as long as the journal).
   */
  callbackStore?: CallbackStore;
  /** Eve's MCP channel (at `/eve/v1/mcp` unless `route` says otherwise); off when absent. */
  mcp?: McpChannelOptions;
  /**
   * Why no new turn may start now (e.g. the instance drains), asked by routes that start turns
   * outside `/eve/v1/session` (the MCP channel's `agent_start`); undefined while turns may start.
   */
  newTurnRefusal?: () => RequestError | undefined;
}

export interface CompatServer {
  /** An express app serving `/eve/v1`; mount it with `parent.use(server.app)`. */
  app: Express;
  sessions: Sessions;
  journal: Journal;
  /**
   * The http server's `'upgrade'` listener: serves `GET /eve/v1/session/:sessionId/ws` (the session
   * stream over a WebSocket) and answers any other upgrade with a 404 in Eve’s error shape.
   * Wire it with `server.on('upgrade', compat.handleUpgrade)`.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Closes every WebSocket stream (1001) and refuses new ones. An http server's `close()` waits
   * for upgraded sockets, so call this before it. `close()` calls it too.
   */
  closeWebSockets(): Promise<void>;
  /** Sessions at work on this instance now. */
  activeSessions(): number;
  /** Sessions held in memory on this instance now, at work or idle. */
  residentSessions(): number;
  /** Waits until no session is at work here; false when `timeoutMs` passed first. */
  quiesce(timeoutMs: number): Promise<boolean>;
  /**
   * Ends every open stream resumably (NDJSON: the lease-ended line, then the end; WebSocket:
   * 1001) and refuses new WebSocket streams: readers reconnect at their cursor, elsewhere.
   */
  endStreams(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown at startup for a configuration the bridge refuses to run with. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/**
 * `production` when NODE_ENV says so (in any case) or the config asks for it; a config cannot
 * downgrade a production environment to development.
 */
export function resolveMode(mode: Mode | undefined, nodeEnv: string | undefined): Mode {
  if (nodeEnv?.trim().toLowerCase() === 'production') return 'production';
  return mode ?? 'development';
}

/** Production fails closed: without route auth the server refuses to start. */
export function assertRouteAuth(mode: Mode, auth: RouteAuthPolicy | undefined): void {
  if (mode === 'production' && !auth) {
    throw new ConfigurationError(
      'Refusing to start in production mode without route auth: pass `auth` (for example bearerTokens({...})). ' +
        'Anonymous access is allowed only in development.',
    );
  }
}

const DAY = 24 * 60 * 60 * 1000;
const DEFAULT_IDLE_SESSION_MS = 5 * 60 * 1000;
const DEFAULT_MAX_RESIDENT_SESSIONS = 1_000;
/** How often a cluster member looks for sessions whose instance died. */
const ORPHAN_SWEEP_MS = 1_000;

export async function createCompatServer(options: CompatServerOptions): Promise<CompatServer> {
  const mode = resolveMode(options.mode, process.env.NODE_ENV);
  assertRouteAuth(mode, options.auth);
  const logger = options.logger ?? silentLogger;
  const journal = options.journal ?? new SqliteJournal(join(options.dataDir ?? '.data', 'journal.db'));
  const callbackStore = options.callbackStore ?? (options.journal ? new MemoryCallbackStore() : new SqliteCallbackStore(join(options.dataDir ?? '.data', 'callbacks.db')));
  const uploads: UploadPolicy = { ...DEFAULT_UPLOAD_POLICY, ...options.uploads };
  const limits = resolveLimits(uploads.maxBytes, options.limits);
  const site = options.site && siteOf(options.site);
  const stream: StreamTimings & WebSocketStreamLimits = { heartbeatMs: 10_000, leaseMs: 60_000, ...DEFAULT_WEBSOCKET_LIMITS, ...options.stream };
  const retentionMs = options.retentionMs ?? 7 * DAY;
  const observer = options.observer ?? {};
  const residency = new SessionResidency({
    idleMs: options.idleSessionMs ?? DEFAULT_IDLE_SESSION_MS,
    maxResident: options.maxResidentSessions ?? DEFAULT_MAX_RESIDENT_SESSIONS,
    async evict(sessionId) {
      journal.evict?.(sessionId);
      await options.runtime.evictSession?.(sessionId);
    },
    ...(observer.sessionEvicted ? { onEvicted: (reason: EvictionReason) => observer.sessionEvicted!(reason) } : {}),
    onError: (error, sessionId) => logger.warn({ err: error, sessionId }, 'could not evict an idle session'),
  });
  const manager = new SessionManager({
    journal,
    runtime: options.runtime,
    logger,
    retentionMs,
    ...(options.clock ? { now: options.clock } : {}),
    ...(observer.turnEnded ? { onTurnEnded: (outcome) => observer.turnEnded!(outcome) } : {}),
    onWorking: (sessionId, working) => residency.working(sessionId, working),
    ...(mode === 'development' ? { anonymousOperations: LOCAL_DEV } : {}),
  });
  const sessions: Sessions = options.cluster ? new ClusteredSessions(manager, options.cluster, journal, logger, ORPHAN_SWEEP_MS) : manager;
  const recovered = await sessions.recoverInterruptedTurns();
  if (recovered > 0) logger.warn({ recovered }, 'ended turns interrupted by the last shutdown');
  const callbacks = new RemoteCallbacks({ store: callbackStore, journal, logger });
  await callbacks.start();
  if (!options.auth) logger.warn({}, 'route auth is off: anonymous callers are admitted (development mode)');

  const app = express();
  app.disable('x-powered-by');
  if (site) {
    app.use((request, response, next) => {
      if (site.hostAllowed(request)) return next();
      sendRefusal(response, MISDIRECTED.code, MISDIRECTED.message);
    });
  }
  if (options.mcp) {
    const deps = { sessions, journal, runtime: options.runtime, auth: options.auth, authContext: { mode, logger }, logger, limits, site, publicUrl: options.site?.publicUrl, newTurnRefusal: options.newTurnRefusal };
    app.use(mcpChannel(options.mcp, deps));
  }
  const api = express.Router();
  if (options.cors) {
    const corsOptions: CorsOptions = { ...(options.cors === true ? {} : options.cors), exposedHeaders: [...EXPOSED_HEADERS] };
    api.use(cors(corsOptions));
  }
  api.get(ROUTES.health, (_request, response) => {
    const body: HealthBody = { ok: true, status: 'ready', workflowId: options.workflowId ?? 'eve-flue-bridge' };
    response.set('cache-control', 'no-store').json(body);
  });
  if (options.publicRoutes) api.use(options.publicRoutes);
  const authContext = { mode, logger };
  api.use(requireRouteAuth(options.auth, authContext));
  api.use(readJsonBody(limits));
  api.get(ROUTES.info, async (_request, response) => {
    response.set('cache-control', 'no-store').json(agentInfo(await options.runtime.describe(), mode));
  });
  const ndjsonStreams = new NdjsonStreams({ journal, timings: stream, observer, logger, watch: residency });
  const ownership = sessionOwnership(journal, options.sessionOwner);
  api.use(
    sessionRoutes({
      sessions,
      journal,
      uploads,
      limits,
      streams: ndjsonStreams,
      ...(ownership ? { ownership } : {}),
      callbacks,
      ...(options.trustedForwarders ? { trustedForwarders: options.trustedForwarders } : {}),
      ...(mode === 'development' ? { anonymousCaller: LOCAL_DEV } : {}),
    }),
  );
  if (options.routes) api.use(options.routes);
  api.use(notFound);
  api.use(errorHandler(logger));
  app.use(EVE_BASE_PATH, api);

  const sweep = setInterval(() => {
    sessions.sweepExpired().catch((error: unknown) => logger.error({ err: error }, 'retention sweep failed'));
  }, Math.min(retentionMs, 60 * 60 * 1000));
  sweep.unref();

  const webSockets = webSocketStreams({ sessions, journal, auth: options.auth, authContext, ...(ownership ? { ownership } : {}), logger, timings: stream, cors: options.cors, observer, watch: residency, ...(site ? { site } : {}) });

  return {
    app,
    sessions,
    journal,
    handleUpgrade: webSockets.handleUpgrade,
    closeWebSockets: () => webSockets.close(),
    activeSessions: () => manager.working,
    residentSessions: () => residency.size,
    quiesce: (timeoutMs) => manager.quiesce(timeoutMs),
    async endStreams() {
      ndjsonStreams.endAll();
      await webSockets.close();
    },
    async close() {
      clearInterval(sweep);
      await webSockets.close();
      await sessions.close();
      await residency.close();
      await callbacks.close();
      await options.runtime.close?.();
      await journal.close();
    },
  };
}
