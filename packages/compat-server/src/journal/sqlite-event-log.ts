import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { JournalLine } from './journal.ts';

/**
 * Events are kept in `event_log` in insertion order: one tick's appends to many sessions fill the
 * same few pages. A session's events are found through `event_index`, written in batches: every
 * `INDEX_BATCH_ROWS` log rows, sorted by session, inside the group transaction that reaches the
 * batch. (Indexed row by row, each append dirtied its session's own index page, most of a commit's
 * pages: the index was more than half of what an event cost to store.) Log rows past
 * `event_index_mark` are not indexed yet; reading them scans that tail of the log, at most about a
 * batch long. Log rows are AUTOINCREMENT so that a row written after a deletion never lands at or
 * below the mark.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS event_log (
    row INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    type TEXT NOT NULL,
    line TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS event_index (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    row INTEGER NOT NULL,
    PRIMARY KEY (session_id, idx)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS event_index_mark (row INTEGER NOT NULL);
  INSERT INTO event_index_mark (row) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM event_index_mark);
`;

/** Log rows written between two index batches. */
export const INDEX_BATCH_ROWS = 8192;

type Row = { idx: number; type: string; line: string };

/**
 * The SQLite journal's event tables. It runs no transaction of its own: the journal calls it inside
 * its transactions, and tells it when one that indexed a batch has committed.
 */
export class SqliteEventLog {
  readonly #sql: Record<
    'insert' | 'readIndexed' | 'readUnindexed' | 'tail' | 'deleteIndexed' | 'deleteUnindexed' | 'deleteIndex' | 'index' | 'lastRow' | 'mark' | 'markedRow',
    StatementSync
  >;
  /** Every log row up to this one is in the index (as of the last commit). */
  #indexed: number;
  /** Log rows written since the last batch (rolled-back ones included: they only bring the next batch forward). */
  #unindexedRows = 0;

  /** Creates the tables, moves a file's events from before into them, and indexes what a crash left unindexed. */
  constructor(db: DatabaseSync, transaction: <T>(work: () => T) => T) {
    db.exec(SCHEMA);
    this.#sql = {
      insert: db.prepare('INSERT INTO event_log (session_id, idx, type, line) VALUES (?, ?, ?, ?)'),
      readIndexed: db.prepare(
        'SELECT i.idx, l.type, l.line FROM event_index i JOIN event_log l ON l.row = i.row WHERE i.session_id = ? AND i.idx >= ? ORDER BY i.idx LIMIT ?',
      ),
      // A session's rows are written in index order, so log order is index order.
      readUnindexed: db.prepare('SELECT idx, type, line FROM event_log WHERE row > ? AND session_id = ? AND idx >= ? ORDER BY row LIMIT ?'),
      tail: db.prepare(
        'SELECT MAX(idx) AS tail FROM (SELECT MAX(idx) AS idx FROM event_index WHERE session_id = ?1 UNION ALL SELECT MAX(idx) FROM event_log WHERE row > ?2 AND session_id = ?1)',
      ),
      deleteIndexed: db.prepare('DELETE FROM event_log WHERE row IN (SELECT row FROM event_index WHERE session_id = ?)'),
      deleteUnindexed: db.prepare('DELETE FROM event_log WHERE row > ? AND session_id = ?'),
      deleteIndex: db.prepare('DELETE FROM event_index WHERE session_id = ?'),
      index: db.prepare('INSERT INTO event_index (session_id, idx, row) SELECT session_id, idx, row FROM event_log WHERE row > ? ORDER BY session_id, idx'),
      lastRow: db.prepare('SELECT MAX(row) AS row FROM event_log'),
      mark: db.prepare('UPDATE event_index_mark SET row = ?'),
      markedRow: db.prepare('SELECT row FROM event_index_mark'),
    };
    this.#indexed = (this.#sql.markedRow.get() as { row: number }).row;
    this.committed(
      transaction(() => {
        migrateEventsTable(db);
        return this.#indexBatch();
      }),
    );
  }

  insert(sessionId: string, lines: readonly JournalLine[]): void {
    for (const l of lines) this.#sql.insert.run(sessionId, l.index, l.type, l.line);
    this.#unindexedRows += lines.length;
  }

  read(sessionId: string, from: number, limit: number): JournalLine[] {
    const rows = this.#sql.readIndexed.all(sessionId, from, limit) as Row[];
    if (rows.length < limit) {
      const next = rows.length > 0 ? rows.at(-1)!.idx + 1 : from;
      rows.push(...(this.#sql.readUnindexed.all(this.#indexed, sessionId, next, limit - rows.length) as Row[]));
    }
    return rows.map((row) => ({ index: row.idx, type: row.type, line: row.line }));
  }

  /** Index of the session's last event, or -1. */
  tail(sessionId: string): number {
    return (this.#sql.tail.get(sessionId, this.#indexed) as { tail: number | null }).tail ?? -1;
  }

  delete(sessionId: string): void {
    this.#sql.deleteIndexed.run(sessionId);
    this.#sql.deleteUnindexed.run(this.#indexed, sessionId);
    this.#sql.deleteIndex.run(sessionId);
  }

  /** Inside the group transaction, before its commit: indexes a batch once one is due. Returns the new mark, for `committed`. */
  indexIfDue(): number | undefined {
    return this.#unindexedRows >= INDEX_BATCH_ROWS ? this.#indexBatch() : undefined;
  }

  /** After the transaction that called `indexIfDue` committed, with what it returned. */
  committed(mark: number | undefined): void {
    if (mark === undefined) return;
    this.#indexed = mark;
    this.#unindexedRows = 0;
  }

  #indexBatch(): number | undefined {
    const last = (this.#sql.lastRow.get() as { row: number | null }).row ?? 0;
    if (last <= this.#indexed) return undefined;
    this.#sql.index.run(this.#indexed);
    this.#sql.mark.run(last);
    return last;
  }
}

/**
 * Files from before kept every event in one `events` table (keyed by session, or in insertion
 * order with an index by session); its rows move into the log once, and are indexed with the rest.
 */
function migrateEventsTable(db: DatabaseSync): void {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()) return;
  db.exec('INSERT INTO event_log (session_id, idx, type, line) SELECT session_id, idx, type, line FROM events ORDER BY session_id, idx; DROP TABLE events;');
}
