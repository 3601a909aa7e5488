import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ConfigurationError } from '@eve-flue/compat-server';

/** Held while a bridge process uses a data folder; `release()` lets the next process have it. */
export interface DataDirLock {
  release(): void;
}

/**
 * Takes the data folder for this process, or fails at once if another process holds it: two
 * bridges writing one folder's SQLite files would each index the other's journal rows, and every
 * group commit would fail from the first duplicate. The lock is SQLite's own exclusive lock on
 * `<dir>/bridge.lock` (an OS file lock), so a process that dies, even by SIGKILL, leaves no stale lock.
 */
export function lockDataDir(dir: string): DataDirLock {
  const db = new DatabaseSync(join(dir, 'bridge.lock'));
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    // A write lock, taken now and held until the connection closes (busy timeout 0: no waiting).
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if (!/locked|busy/i.test((error as Error).message)) throw error;
    throw new ConfigurationError(
      `[eve-flue] the data folder ${dir} is in use by another bridge process: stop it, or give this one its own DATA_DIR ` +
        '(several instances share sessions through a Redis store, not through one folder)',
    );
  }
  return {
    release() {
      if (db.isOpen) db.close();
    },
  };
}
