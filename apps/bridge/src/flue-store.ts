import type { PersistenceAdapter } from '@flue/runtime/adapter';
import type { GenerationStore } from '@eve-flue/flue-adapter';
import { redisFlueDb } from '@eve-flue/flue-redis';
import { Redis } from 'ioredis';
import type { RedisStore } from './config.ts';

/**
 * Where Flue keeps the agent's conversations. With a Redis store they live in that Redis under
 * the same prefix (`<prefix>flue:`), so any instance that takes a session over continues the
 * conversation; `flueDb` replaces that with any Flue persistence adapter. Without either, the
 * Flue runtime keeps its default: SQLite in the data directory (or memory).
 */
export function flueStoreFor(redis: RedisStore | undefined, flueDb: PersistenceAdapter | undefined) {
  const prefix = redis ? `${redis.prefix ?? 'eve:'}flue:` : undefined;
  return {
    db: flueDb ?? (redis ? redisFlueDb(redis.redis, { prefix }) : undefined),
    // Which Flue instance holds a session must be as shared as the sessions are.
    generations: redis ? new RedisGenerations(redis.redis, `${prefix}generations`) : undefined,
  };
}

/** Session generations in one Redis hash, shared by every instance. */
class RedisGenerations implements GenerationStore {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(url: string, key: string) {
    this.#redis = new Redis(url, { maxRetriesPerRequest: 1 });
    this.#redis.on('error', () => undefined);
    this.#key = key;
  }

  async get(sessionId: string): Promise<number | undefined> {
    const value = await this.#redis.hget(this.#key, sessionId);
    return value === null ? undefined : Number(value);
  }

  async set(sessionId: string, generation: number): Promise<void> {
    await this.#redis.hset(this.#key, sessionId, String(generation));
  }

  close(): void {
    this.#redis.disconnect();
  }
}
