import type { Redis } from 'ioredis';
import type { Transactions } from './transactions.ts';

/** What every store of the adapter works with: commands, its transactions, its keys. */
export interface RedisContext {
  redis: Redis;
  keys: Keys;
  transactions: Transactions;
}

/** Every key the adapter writes, under one prefix (the bridge's `prefix` + `flue:`). */
export class Keys {
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** Hash: the format-version stamp. */
  get meta(): string {
    return `${this.prefix}meta`;
  }
  /** Counter: admission order of submissions. */
  get sequence(): string {
    return `${this.prefix}seq`;
  }
  /** Sorted set (score: sequence): every unsettled submission. */
  get unsettled(): string {
    return `${this.prefix}unsettled`;
  }
  /** String: one submission row as JSON. */
  submission(id: string): string {
    return `${this.prefix}sub:${id}`;
  }
  /** Sorted set (score: sequence): the unsettled submissions of one conversation lane. */
  lane(sessionKey: string): string {
    return `${this.prefix}lane:${sessionKey}`;
  }
  /** String: a conversation stream's head, identity and producer, as JSON. */
  stream(path: string): string {
    return `${this.prefix}stream:${path}`;
  }
  /** List: a conversation stream's batches, index = offset. */
  batches(path: string): string {
    return `${this.prefix}batches:${path}`;
  }
  /** String: a stream's fold checkpoint, as JSON (one SET: never torn). */
  checkpoint(path: string): string {
    return `${this.prefix}checkpoint:${path}`;
  }
  /** String: one attachment (ref, owner, base64 bytes), as JSON. */
  attachment(path: string, id: string): string {
    return `${this.prefix}attachment:${JSON.stringify([path, id])}`;
  }
}
