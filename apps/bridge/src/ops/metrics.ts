import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sendRefusal, type Journal, type ServerObserver } from '@eve-flue/compat-server';

/** Prometheus metrics of one bridge instance (prom-client, text format). */
export class BridgeMetrics {
  readonly registry = new Registry();
  readonly #openStreams: Gauge<'transport'>;
  readonly #turns: Counter<'outcome'>;
  readonly #signIns: Counter<'outcome'>;
  readonly #journalAppend: Histogram;
  readonly #upstream: Histogram<'connection' | 'status'>;
  readonly #redisFailures: Counter<'command'>;
  readonly #countFailure: (command: string) => void;
  readonly #evictions: Counter<'reason'>;
  #activeSessions: () => number = () => 0;
  #residentSessions: () => number = () => 0;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const active = () => this.#activeSessions();
    new Gauge({
      name: 'eve_bridge_active_sessions',
      help: 'Sessions at work on this instance (a turn running or queued).',
      registers,
      collect() {
        this.set(active());
      },
    });
    const resident = () => this.#residentSessions();
    new Gauge({
      name: 'eve_bridge_resident_sessions',
      help: 'Sessions held in memory on this instance (at work, followed, or idle and not evicted yet).',
      registers,
      collect() {
        this.set(resident());
      },
    });
    this.#evictions = new Counter({ name: 'eve_bridge_session_evictions_total', help: 'Idle sessions evicted from memory, by reason (idle, capacity).', labelNames: ['reason'], registers });
    for (const reason of ['idle', 'capacity']) this.#evictions.inc({ reason }, 0);
    this.#openStreams = new Gauge({ name: 'eve_bridge_open_streams', help: 'Session streams open now, by transport.', labelNames: ['transport'], registers });
    for (const transport of ['ndjson', 'websocket']) this.#openStreams.set({ transport }, 0);
    this.#turns = new Counter({ name: 'eve_bridge_turns_total', help: 'Turns ended, by outcome.', labelNames: ['outcome'], registers });
    this.#signIns = new Counter({ name: 'eve_bridge_sign_ins_total', help: 'Sign-in callbacks, by outcome.', labelNames: ['outcome'], registers });
    this.#journalAppend = new Histogram({
      name: 'eve_bridge_journal_append_seconds',
      help: 'Latency of one journal append (a batch of events).',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.#upstream = new Histogram({
      name: 'eve_bridge_upstream_request_seconds',
      help: 'Latency of requests to upstream MCP servers, by connection and HTTP status (0: no answer).',
      labelNames: ['connection', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#redisFailures = new Counter({ name: 'eve_bridge_redis_command_failures_total', help: 'Redis commands that failed, by command.', labelNames: ['command'], registers });
    this.#countFailure = (command) => this.#redisFailures.inc({ command });
    redisFailureListeners.add(this.#countFailure);
    watchRedisCommands();
  }

  close(): void {
    redisFailureListeners.delete(this.#countFailure);
  }

  /** Where the active-sessions gauge reads from (known once the server is built). */
  countActiveSessions(read: () => number): void {
    this.#activeSessions = read;
  }

  /** Where the resident-sessions gauge reads from (known once the server is built). */
  countResidentSessions(read: () => number): void {
    this.#residentSessions = read;
  }

  readonly observer: ServerObserver = {
    streamOpened: (transport) => this.#openStreams.inc({ transport }),
    streamClosed: ({ transport }) => this.#openStreams.dec({ transport }),
    turnEnded: (outcome) => this.#turns.inc({ outcome }),
    sessionEvicted: (reason) => this.#evictions.inc({ reason }),
  };

  signIn(outcome: string): void {
    this.#signIns.inc({ outcome });
  }

  /** The journal, its appends timed. */
  timedJournal(journal: Journal): Journal {
    const histogram = this.#journalAppend;
    const append: Journal['append'] = async (...args) => {
      const stop = histogram.startTimer();
      try {
        return await journal.append(...args);
      } finally {
        stop();
      }
    };
    // Each method bound once: readers call `read` for every page they send.
    const bound = new Map<PropertyKey, unknown>([['append', append]]);
    return new Proxy(journal, {
      get(target, property) {
        const known = bound.get(property);
        if (known !== undefined) return known;
        const value = Reflect.get(target, property) as unknown;
        if (typeof value !== 'function') return value;
        const method = (value as (...a: unknown[]) => unknown).bind(target);
        bound.set(property, method);
        return method;
      },
    });
  }

  /** A connection's mount, its upstream requests timed by connection and status. */
  timedMount<T extends { name: string; fetch: typeof fetch }>(mount: T): T {
    const histogram = this.#upstream;
    const { name: connection, fetch: upstream } = mount;
    const timed: typeof fetch = async (input, init) => {
      const stop = histogram.startTimer({ connection });
      let status = 0;
      try {
        const response = await upstream(input, init);
        status = response.status;
        return response;
      } finally {
        stop({ status: String(status) });
      }
    };
    return { ...mount, fetch: timed };
  }
}

const redisFailureListeners = new Set<(command: string) => void>();
let watchingRedis = false;

/**
 * Every Redis client of the process (journal, leases, sign-ins, tokens, Flue) goes through
 * ioredis's `sendCommand`; watching the command's promise there counts each failed command once,
 * whichever package issued it. Installed once per process.
 */
function watchRedisCommands(): void {
  if (watchingRedis) return;
  watchingRedis = true;
  const prototype = Redis.prototype as unknown as { sendCommand(command: { name: string; promise?: Promise<unknown> }, stream?: unknown): unknown };
  const send = prototype.sendCommand;
  prototype.sendCommand = function (command, stream) {
    const result = send.call(this, command, stream);
    command.promise?.catch(() => {
      for (const notify of redisFailureListeners) notify(command.name);
    });
    return result;
  };
}

/** Serves `GET /metrics` on its own port, on the loopback interface only. */
export async function serveMetrics(metrics: BridgeMetrics, port: number): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      sendRefusal(response, 'not_found', 'No such route.');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => sendRefusal(response, 'service_unavailable', 'Metrics could not be collected.'),
    );
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, server };
}
