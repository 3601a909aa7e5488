import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@jest/globals';
import { flueStore } from '@eve-flue/flue-adapter';

type Sql = { exec(query: string): { toArray(): Record<string, unknown>[] } };

test("Flue's store is its own SQLite store, in WAL mode with synchronous=NORMAL", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'eve-flue-store-'));
  const adapter = flueStore(join(dir, 'flue.db'));
  try {
    await adapter.migrate?.();
    const stores = await adapter.connect();
    const { sql } = stores.conversationStreamStore as unknown as { sql: Sql };
    expect(sql.exec('PRAGMA journal_mode').toArray()).toEqual([{ journal_mode: 'wal' }]);
    // 1 = NORMAL (SQLite's default is 2 = FULL).
    expect(sql.exec('PRAGMA synchronous').toArray()).toEqual([{ synchronous: 1 }]);
  } finally {
    await adapter.close?.();
    await rm(dir, { recursive: true, force: true });
  }
});
