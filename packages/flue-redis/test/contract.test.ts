import { randomUUID } from 'node:crypto';
import { afterAll } from '@jest/globals';
import { defineStoreContractTests } from '@flue/runtime/test-utils';
import { defineConversationStreamStoreContractTests } from '@flue/runtime/test-utils/conversation-stream';
import { defineAttachmentStoreContractTests } from '@flue/runtime/test-utils/attachment-store';
import { Redis } from 'ioredis';
import { redisFlueDb } from '../src/index.ts';

/** Flue's own acceptance suites, each test on a fresh namespace of the test Redis. */
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const admin = new Redis(url);
const opened: { db: ReturnType<typeof redisFlueDb>; transactions: Redis }[] = [];

/** An adapter on a fresh namespace: commands shared (as in the bridge), transactions on a connection of its own. */
function open() {
  const transactions = new Redis(url);
  const db = redisFlueDb({ commands: admin, transactions }, { prefix: `test:flue-contract:${randomUUID()}:` });
  opened.push({ db, transactions });
  return db;
}

async function fresh() {
  const db = open();
  await db.migrate!();
  return { db, stores: await db.connect() };
}

async function cleanup(): Promise<void> {
  for (const { db, transactions } of opened.splice(0)) {
    const keys = await admin.keys(`${db.keys.prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await db.close!();
    transactions.disconnect();
  }
}

afterAll(async () => {
  await cleanup();
  await admin.quit();
});

defineStoreContractTests('Redis', {
  create: async () => (await fresh()).stores.submissionStore,
  cleanup,
  formatVersion: {
    async open() {
      const db = open();
      const meta = db.keys.meta;
      return {
        migrate: () => db.migrate!() as Promise<void>,
        readStamp: async (key: string) => (await admin.hget(meta, key)) ?? undefined,
        writeStamp: async (key: string, value: string) => void (await admin.hset(meta, key, value)),
        deleteStamp: async (key: string) => void (await admin.hdel(meta, key)),
        cleanup,
      };
    },
  },
});

defineConversationStreamStoreContractTests('Redis', {
  async create() {
    const { stores } = await fresh();
    return { stream: stores.conversationStreamStore, submissionStore: stores.submissionStore };
  },
  cleanup,
});

defineAttachmentStoreContractTests('Redis', {
  create: async () => (await fresh()).stores.attachmentStore,
  cleanup,
});
