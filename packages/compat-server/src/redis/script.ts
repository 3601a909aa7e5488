import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script sent by its SHA1 (EVALSHA): Redis does not hash and parse the body on every call,
 * and the body crosses the wire only when Redis lacks it (a restart, SCRIPT FLUSH, a fresh replica).
 */
export class RedisScript {
  /** The body, for a pipeline (which cannot fall back from EVALSHA per command). */
  readonly lua: string;
  readonly #sha: string;
  readonly #keys: number;

  constructor(lua: string, keys: number) {
    this.lua = lua;
    this.#sha = createHash('sha1').update(lua).digest('hex');
    this.#keys = keys;
  }

  async run(redis: Redis, ...keysThenArgs: string[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, this.#keys, ...keysThenArgs);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return redis.eval(this.lua, this.#keys, ...keysThenArgs);
    }
  }
}
