import type { ChainableCommander, Redis } from 'ioredis';

/**
 * One optimistic Redis transaction: every key it reads is WATCHed first, its writes are queued
 * and sent as one MULTI/EXEC, and the whole body runs again when another client changed a
 * watched key in between. Reads see the transaction's own pending string writes.
 */
export interface Transaction {
  get(key: string): Promise<string | null>;
  /** Members of a sorted set, lowest score first. */
  members(key: string): Promise<string[]>;
  set(key: string, value: string): void;
  add(key: string, score: number, member: string): void;
  remove(key: string, member: string): void;
  push(key: string, value: string): void;
  /** Runs after the transaction committed (notifications). */
  afterCommit(callback: () => void): void;
}

/** How often a transaction may lose a race with another instance before it gives up. */
const MAX_ATTEMPTS = 50;

/**
 * Runs transactions on a connection of their own, one at a time: WATCH is per connection, so
 * two interleaved transactions on one connection would watch each other's keys. Across
 * processes, WATCH makes every transaction atomic.
 */
export class Transactions {
  readonly #redis: Redis;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  run<T>(body: (tx: Transaction) => Promise<T>): Promise<T> {
    const result = this.#queue.then(() => this.#attempt(body, 1));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #attempt<T>(body: (tx: Transaction) => Promise<T>, attempt: number): Promise<T> {
    const redis = this.#redis;
    const pending = new Map<string, string>();
    const writes: ((multi: ChainableCommander) => void)[] = [];
    const committed: (() => void)[] = [];
    const tx: Transaction = {
      async get(key) {
        if (pending.has(key)) return pending.get(key)!;
        await redis.watch(key);
        return redis.get(key);
      },
      async members(key) {
        await redis.watch(key);
        return redis.zrange(key, '0', '-1');
      },
      set(key, value) {
        pending.set(key, value);
        writes.push((multi) => multi.set(key, value));
      },
      add(key, score, member) {
        writes.push((multi) => multi.zadd(key, String(score), member));
      },
      remove(key, member) {
        writes.push((multi) => multi.zrem(key, member));
      },
      push(key, value) {
        writes.push((multi) => multi.rpush(key, value));
      },
      afterCommit(callback) {
        committed.push(callback);
      },
    };
    let result: T;
    try {
      result = await body(tx);
    } catch (error) {
      // The body's own failure is the one to report, even when Redis is gone for the unwatch too.
      await redis.unwatch().catch(() => undefined);
      throw error;
    }
    if (writes.length === 0) {
      await redis.unwatch();
      return result;
    }
    const multi = redis.multi();
    for (const write of writes) write(multi);
    const replies = await multi.exec();
    if (replies === null) {
      if (attempt >= MAX_ATTEMPTS) throw new Error('[flue-redis] a transaction kept losing races with other instances.');
      return this.#attempt(body, attempt + 1);
    }
    for (const [error] of replies) if (error) throw error;
    for (const callback of committed) callback();
    return result;
  }
}
