import type { PersistenceAdapter } from '@flue/runtime/adapter';
import { sqlite } from '@flue/runtime/node';

/** The part of Flue's built-in SQLite stores that reaches their connection (a public field, undocumented). */
interface SqlBacked {
  sql?: { exec(query: string): { toArray(): unknown[] } };
}

/**
 * Flue's built-in `sqlite()` store at `file`, with `synchronous = NORMAL` on its WAL connection
 * instead of SQLite's default `FULL`: a commit no longer waits for an fsync, so Flue's commit per
 * streamed delta stops bounding how fast turns stream. A process crash loses nothing committed;
 * a power loss or OS crash can lose the last commits (SQLite stays consistent). The bridge's own
 * journal runs with the same setting. Fails at start if Flue's store no longer exposes its
 * connection, rather than silently running with a different durability.
 */
export function flueStore(file: string): PersistenceAdapter {
  const adapter = sqlite(file);
  return {
    migrate: () => adapter.migrate?.(),
    async connect() {
      const stores = await adapter.connect();
      const { sql } = stores.conversationStreamStore as SqlBacked;
      if (!sql) throw new Error("Flue's SQLite store no longer exposes its connection: cannot set its durability.");
      sql.exec('PRAGMA synchronous = NORMAL');
      return stores;
    },
    close: () => adapter.close?.(),
  };
}
