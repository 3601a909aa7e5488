import { Redis, type RedisOptions } from 'ioredis';
import { StoreUnavailableError, type Channels } from '@eve-flue/session-contract';

export interface RedisConnectionsOptions {
  /** Connection settings for every client (tests pass `retryStrategy`); the failure policy below wins. */
  redis?: RedisOptions;
  /** How long `ready()` waits for Redis. Default 5 s. */
  readyTimeoutMs?: number;
  /** Names the connections in `CLIENT LIST` (`<name>:commands`, `<name>:channels`, …). Default `eve-bridge`. */
  name?: string;
}

/**
 * One policy for every connection: a command fails within one reconnect attempt instead of
 * queueing while Redis is away, so an outage is a prompt 503 rather than a request hanging on a
 * queue, and nothing is replayed later against a state the caller already gave up on.
 */
const FAIL_FAST: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false };

/**
 * The Redis connections of one bridge instance, opened once: a command connection shared by
 * every store (commands, scripts, MULTI, PUBLISH: none of them holds connection state), one
 * subscription connection multiplexing every store's channels, and dedicated connections only
 * where state lives on the connection (WATCH). Stores take their clients from here; closing the
 * stores leaves the connections to `close()`.
 */
export class RedisConnections {
  readonly commands: Redis;
  readonly channels: RedisChannels;
  readonly #url: string;
  readonly #options: RedisOptions;
  readonly #readyTimeoutMs: number;
  readonly #name: string;
  readonly #dedicated: Redis[] = [];

  constructor(url: string, options: RedisConnectionsOptions = {}) {
    this.#url = url;
    this.#options = { ...options.redis, ...FAIL_FAST };
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 5_000;
    this.#name = options.name ?? 'eve-bridge';
    // Commands issued in one tick (every session's appends, leases, reads) leave in one write.
    this.commands = this.#open('commands', { enableAutoPipelining: true });
    this.channels = new RedisChannels(this.#open('channels', { autoResubscribe: false }), (client) => this.#whenReady(client));
  }

  /** A connection of its own, for commands that keep state on it (WATCH … EXEC). */
  dedicated(role: string): Redis {
    const client = this.#open(role);
    this.#dedicated.push(client);
    return client;
  }

  /** Resolves once every connection is ready and answers; rejects with StoreUnavailableError otherwise. */
  async ready(): Promise<void> {
    await Promise.all([this.commands, ...this.#dedicated].map((client) => this.#whenReady(client)));
    await this.channels.ready();
    try {
      await this.commands.ping();
    } catch (error) {
      throw unreachable(error);
    }
  }

  /**
   * At once, for a readiness probe (`ready()` waits instead): resolves when every connection is up
   * and the command connection answers. A store's first command after an outage can otherwise
   * meet a connection still reconnecting on its own schedule.
   */
  async check(): Promise<void> {
    const down = [this.commands, this.channels.client, ...this.#dedicated].find((client) => client.status !== 'ready');
    if (down) throw unreachable(new Error(`${down.options.connectionName} is ${down.status}`));
    try {
      await this.commands.ping();
    } catch (error) {
      throw unreachable(error);
    }
  }

  async close(): Promise<void> {
    // An ended client has no socket left; disconnecting it would only arm ioredis's stale-socket timer.
    for (const client of [this.commands, this.channels.client, ...this.#dedicated]) if (client.status !== 'end') client.disconnect();
  }

  #open(role: string, extra: RedisOptions = {}): Redis {
    const client = new Redis(this.#url, { ...this.#options, ...extra, connectionName: `${this.#name}:${role}` });
    // Failures surface on the commands (as StoreUnavailableError) and in ready(); ioredis reconnects.
    client.on('error', () => undefined);
    return client;
  }

  #whenReady(client: Redis): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    // Gave up reconnecting (its retry strategy said so): it will never be ready.
    if (client.status === 'end') return Promise.reject(unreachable(new Error('the connection ended')));
    return new Promise<void>((resolve, reject) => {
      let lastError: unknown;
      const noteError = (error: unknown) => (lastError = error);
      const settle = (error?: unknown) => {
        clearTimeout(timer);
        client.off('ready', onReady).off('end', onEnd).off('error', noteError);
        if (error === undefined) resolve();
        else reject(unreachable(error));
      };
      const onReady = () => settle();
      const onEnd = () => settle(lastError ?? new Error('the connection ended'));
      const timer = setTimeout(() => settle(lastError ?? new Error(`not ready within ${this.#readyTimeoutMs} ms`)), this.#readyTimeoutMs);
      client.on('error', noteError).once('ready', onReady).once('end', onEnd);
    });
  }
}

/**
 * Every channel of an instance on one subscription connection. Subscriptions are restored by hand
 * on each (re)connect, from the channels wanted now: a queued unsubscribe replayed after a
 * resubscribe would silently drop a live channel.
 */
export class RedisChannels implements Channels {
  readonly client: Redis;
  readonly #listeners = new Map<string, Set<(message: string) => void>>();
  readonly #lost = new Set<() => void>();
  readonly #whenReady: (client: Redis) => Promise<void>;

  constructor(client: Redis, whenReady: (client: Redis) => Promise<void>) {
    this.client = client;
    this.#whenReady = whenReady;
    client.on('ready', () => {
      const channels = [...this.#listeners.keys()];
      if (channels.length > 0) void client.subscribe(...channels).catch(() => undefined);
    });
    // Messages published while the connection is down cannot be replayed.
    client.on('close', () => {
      for (const lost of [...this.#lost]) lost();
    });
    client.on('message', (channel: string, message: string) => {
      for (const listener of [...(this.#listeners.get(channel) ?? [])]) listener(message);
    });
  }

  listen(channel: string, listener: (message: string) => void): () => void {
    let listeners = this.#listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
      if (this.client.status === 'ready') void this.client.subscribe(channel).catch(() => undefined);
    }
    listeners.add(listener);
    return () => {
      const left = this.#listeners.get(channel);
      if (!left?.delete(listener) || left.size > 0) return;
      this.#listeners.delete(channel);
      if (this.client.status === 'ready') void this.client.unsubscribe(channel).catch(() => undefined);
    };
  }

  /** Calls `listener` whenever the connection drops, until the returned function is called. */
  onLost(listener: () => void): () => void {
    this.#lost.add(listener);
    return () => this.#lost.delete(listener);
  }

  async ready(): Promise<void> {
    await this.#whenReady(this.client);
    const channels = [...this.#listeners.keys()];
    if (channels.length === 0) return;
    try {
      // Subscribing again to a subscribed channel is harmless; it confirms the subscription.
      await this.client.subscribe(...channels);
    } catch (error) {
      throw unreachable(error);
    }
  }
}

function unreachable(cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError('Redis cannot be reached.', { cause });
}
