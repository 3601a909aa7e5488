import { assertSupportedFlueFormatVersion, FLUE_FORMAT_VERSION, PersistedFormatVersionError, type PersistenceAdapter, type PersistenceStores } from '@flue/runtime/adapter';
import type { Redis } from 'ioredis';
import { RedisAttachmentStore } from './attachment-store.ts';
import { RedisConversationStreamStore } from './conversation-stream-store.ts';
import { Keys } from './keys.ts';
import { RedisSubmissionStore } from './submission-store.ts';
import { Transactions } from './transactions.ts';

export interface RedisFlueDbOptions {
  /** Every key starts with it (the bridge passes its own prefix + `flue:`). Default `flue:`. */
  prefix?: string;
  /** Called on each failed Redis command (for metrics); the failure still reaches Flue. */
  onCommandError?: (error: unknown) => void;
}

/** The last store format Flue stamped before the format-version scheme; adopted in place. */
const LEGACY_SCHEMA_VERSION = '8';

/** The connections the adapter runs on; their owner opens and closes them. */
export interface RedisFlueConnections {
  /** Plain commands: may be shared with other users of the same Redis. */
  commands: Redis;
  /** WATCH … EXEC transactions: WATCH lives on the connection, so this one must be the adapter's alone. */
  transactions: Redis;
}

/**
 * A Flue persistence adapter on Redis (`start({ db: redisFlueDb({ commands, transactions }) })`):
 * conversations, accepted submissions and attachments, shared by every process that points at
 * the same Redis and prefix. Use a Redis with persistence (AOF) and `maxmemory-policy noeviction`.
 */
export function redisFlueDb({ commands, transactions }: RedisFlueConnections, options: RedisFlueDbOptions = {}): PersistenceAdapter & { readonly keys: Keys } {
  const keys = new Keys(options.prefix ?? 'flue:');
  const onCommandError = options.onCommandError;
  if (onCommandError) for (const client of [commands, transactions]) client.on('error', onCommandError);
  return {
    keys,
    async migrate() {
      await migrate(commands, keys);
    },
    async connect(): Promise<PersistenceStores> {
      await Promise.all([commands.ping(), transactions.ping()]);
      const db = { redis: commands, keys, transactions: new Transactions(transactions) };
      return {
        submissionStore: new RedisSubmissionStore(db),
        conversationStreamStore: new RedisConversationStreamStore(db),
        attachmentStore: new RedisAttachmentStore(db),
      };
    },
    async close() {
      if (onCommandError) for (const client of [commands, transactions]) client.off('error', onCommandError);
    },
  };
}

/**
 * Stamps a fresh namespace with Flue's format version, adopts the legacy stamp, and refuses a
 * namespace written in another format, or holding data with no stamp at all.
 */
export async function migrate(redis: Redis, keys: Keys): Promise<void> {
  const [stored, legacy] = await redis.hmget(keys.meta, 'format_version', 'schema_version');
  if (stored) return assertSupportedFlueFormatVersion(stored);
  if (legacy) {
    if (legacy !== LEGACY_SCHEMA_VERSION) throw new PersistedFormatVersionError({ storedVersion: legacy, supportedVersion: FLUE_FORMAT_VERSION });
    await redis.multi().hset(keys.meta, 'format_version', String(FLUE_FORMAT_VERSION)).hdel(keys.meta, 'schema_version').exec();
    return;
  }
  if (await holdsData(redis, keys)) throw new PersistedFormatVersionError({ storedVersion: 'unversioned', supportedVersion: FLUE_FORMAT_VERSION });
  await redis.hsetnx(keys.meta, 'format_version', String(FLUE_FORMAT_VERSION));
}

async function holdsData(redis: Redis, keys: Keys): Promise<boolean> {
  const pattern = `${keys.prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (found.some((key) => key !== keys.meta)) return true;
    cursor = next;
  } while (cursor !== '0');
  return false;
}
