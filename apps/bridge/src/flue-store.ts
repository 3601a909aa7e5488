import type { PersistenceAdapter } from '@flue/runtime/adapter';
import type { GenerationStore } from '@eve-flue/flue-adapter';
import { redisFlueDb } from '@eve-flue/flue-redis';
import type { RedisConnections } from '@eve-flue/compat-server';
import { RedisKeyspace } from '@eve-flue/session-contract';
import type { Redis } from 'ioredis';

/**
 * Where Flue keeps the agent's conversations. With a Redis store they live in that Redis under
 * the same prefix (`<prefix>flue:`), so any instance that takes a session over continues the
 * conversation; `flueDb` replaces that with any Flue persistence adapter. Without either, the
 * Flue runtime keeps its default: SQLite in the data directory (or memory).
 */
export function flueStoreFor(redis: { connections: RedisConnections; prefix: string } | undefined, flueDb: PersistenceAdapter | undefined) {
  if (!redis) return { db: flueDb, generations: undefined };
  const { connections } = redis;
  const keys = new RedisKeyspace(redis.prefix);
  return {
    // Flue's WATCH transactions get a connection of their own; its plain commands share the instance's.
    db: flueDb ?? redisFlueDb({ commands: connections.commands, transactions: connections.dedicated('flue-transactions') }, { prefix: keys.flue }),
    // Which Flue instance holds a session must be as shared as the sessions are.
    generations: new RedisGenerations(connections.commands, keys.generations),
  };
}

/** Session generations in one Redis hash, shared by every instance. */
class RedisGenerations implements GenerationStore {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(redis: Redis, key: string) {
    this.#redis = redis;
    this.#key = key;
  }

  async get(sessionId: string): Promise<number | undefined> {
    const value = await this.#redis.hget(this.#key, sessionId);
    return value === null ? undefined : Number(value);
  }

  async set(sessionId: string, generation: number): Promise<void> {
    await this.#redis.hset(this.#key, sessionId, String(generation));
  }

  /** The connection is the instance's, closed by its owner. */
  close(): void {}
}
