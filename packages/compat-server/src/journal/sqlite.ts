import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { envelope, type EveEvent, type EveEventDraft } from '@eve-flue/eve-protocol';
import { serializeEvent, type AppendOptions, type Journal, type JournalLine, type SessionRecord, type TailListener } from './journal.ts';
import { GroupCommit } from './group-commit.ts';
import { TailListeners } from './listeners.ts';
import { RecentLines } from './recent-lines.ts';
import { SqliteEventLog } from './sqlite-event-log.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    active_turn INTEGER NOT NULL DEFAULT 0,
    ended_at INTEGER
  );
  CREATE TABLE IF NOT EXISTS operations (
    key TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
  );
`;

interface PendingAppend {
  sessionId: string;
  drafts: readonly EveEventDraft[];
  options: AppendOptions;
}

interface StagedAppend {
  events: EveEvent[];
  lines: JournalLine[];
}

/**
 * The embedded default: one SQLite file (Node's built-in `node:sqlite`), WAL mode with
 * `synchronous = NORMAL` (a process crash loses nothing committed; a power loss may lose the
 * last commits). Appends are group-committed: all sessions' appends of one tick share one
 * transaction, each whole or not at all, so a crash never leaves half a batch or a record out of
 * step, and an event reaches readers (and `append` resolves) only once it is committed.
 */
export class SqliteJournal implements Journal {
  readonly #db: DatabaseSync;
  readonly #listeners = new TailListeners();
  readonly #recent = new RecentLines();
  /** Committed tails: what readers may see. */
  readonly #tails = new Map<string, number>();
  /** Tails written by the open group transaction, not committed yet. */
  readonly #staged = new Map<string, number>();
  readonly #appends: GroupCommit<PendingAppend, StagedAppend>;
  readonly #sql: Record<
    'insertSession' | 'upsertSession' | 'getSession' | 'interrupted' | 'endedBefore' | 'deleteOperations' | 'upsertOperation' | 'getOperation',
    StatementSync
  >;
  readonly #events: SqliteEventLog;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    // Checkpoints (each with an fsync) every 10,000 pages (~40 MiB of WAL) instead of SQLite's 1,000:
    // streaming many sessions filled 1,000 pages several times a second.
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 10000;');
    this.#db.exec(SCHEMA);
    this.#events = new SqliteEventLog(this.#db, (work) => this.#transaction(work));
    const db = this.#db;
    this.#sql = {
      insertSession: db.prepare('INSERT INTO sessions (id, record, active_turn, ended_at) VALUES (?, ?, ?, ?)'),
      upsertSession: db.prepare(
        'INSERT INTO sessions (id, record, active_turn, ended_at) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT(id) DO UPDATE SET record = excluded.record, active_turn = excluded.active_turn, ended_at = excluded.ended_at',
      ),
      getSession: db.prepare('SELECT record FROM sessions WHERE id = ?'),
      interrupted: db.prepare('SELECT record FROM sessions WHERE active_turn = 1'),
      endedBefore: db.prepare(
        "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ? AND json_extract(record, '$.eventsDropped') IS NULL",
      ),
      deleteOperations: db.prepare('DELETE FROM operations WHERE session_id = ?'),
      upsertOperation: db.prepare(
        'INSERT INTO operations (key, session_id) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET session_id = excluded.session_id',
      ),
      getOperation: db.prepare('SELECT session_id FROM operations WHERE key = ?'),
    };
    this.#appends = new GroupCommit({
      begin: () => {
        this.#staged.clear();
        db.exec('BEGIN IMMEDIATE');
      },
      commit: () => {
        const indexed = this.#events.indexIfDue();
        db.exec('COMMIT');
        this.#events.committed(indexed);
      },
      rollback: () => db.exec('ROLLBACK'),
      write: (append) => this.#write(append),
      committed: (append, staged) => this.#publish(append.sessionId, staged.lines),
    });
  }

  async createSession(record: SessionRecord, operationKey?: string): Promise<SessionRecord> {
    return this.#transaction(() => {
      if (operationKey !== undefined) {
        const row = this.#sql.getOperation.get(operationKey) as { session_id: string } | undefined;
        const existing = row && this.#getRecord(row.session_id);
        if (existing?.status === 'open') return existing;
        this.#sql.upsertOperation.run(operationKey, record.id);
      }
      this.#sql.insertSession.run(...sessionRow(record));
      this.#tails.set(record.id, -1);
      return record;
    });
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.#getRecord(sessionId);
  }

  async listInterrupted(): Promise<SessionRecord[]> {
    return (this.#sql.interrupted.all() as { record: string }[]).map((row) => JSON.parse(row.record) as SessionRecord);
  }

  async listEndedBefore(cutoff: number): Promise<string[]> {
    return (this.#sql.endedBefore.all(cutoff) as { id: string }[]).map((row) => row.id);
  }

  async dropEvents(sessionId: string): Promise<void> {
    this.#transaction(() => {
      const record = this.#getRecord(sessionId);
      if (record) this.#sql.upsertSession.run(...sessionRow({ ...record, eventsDropped: true }));
      this.#events.delete(sessionId);
      this.#sql.deleteOperations.run(sessionId);
    });
    this.#recent.forget(sessionId);
    this.#tails.delete(sessionId);
  }

  evict(sessionId: string): void {
    // A tail still staged in the open group transaction is the committed one soon: keep it.
    if (this.#staged.has(sessionId)) return;
    this.#recent.forget(sessionId);
    this.#tails.delete(sessionId);
  }

  async append(sessionId: string, drafts: readonly EveEventDraft[], options: AppendOptions = {}): Promise<EveEvent[]> {
    return (await this.#appends.enqueue({ sessionId, drafts, options })).events;
  }

  async read(sessionId: string, from: number, limit: number): Promise<JournalLine[]> {
    const cached = this.#recent.read(sessionId, from, limit);
    if (cached) return cached;
    return this.#events.read(sessionId, from, limit);
  }

  async tail(sessionId: string): Promise<number> {
    return this.#tailOf(sessionId);
  }

  subscribe(sessionId: string, listener: TailListener): void {
    this.#listeners.add(sessionId, listener);
  }

  unsubscribe(sessionId: string, listener: TailListener): void {
    this.#listeners.delete(sessionId, listener);
  }

  async close(): Promise<void> {
    if (!this.#db.isOpen) return;
    this.#appends.flush();
    this.#db.close();
  }

  /** One append inside the open group transaction; indexes follow what this transaction already wrote. */
  #write({ sessionId, drafts, options }: PendingAppend): StagedAppend {
    const first = (this.#staged.get(sessionId) ?? this.#tailOf(sessionId)) + 1;
    const events = drafts.map((draft, i) => envelope(draft, first + i, options.deliveryIds));
    const lines = events.map(serializeEvent);
    this.#events.insert(sessionId, lines);
    if (options.record) this.#sql.upsertSession.run(...sessionRow(options.record));
    if (lines.length > 0) this.#staged.set(sessionId, first + lines.length - 1);
    return { events, lines };
  }

  #publish(sessionId: string, lines: JournalLine[]): void {
    if (lines.length === 0) return;
    const tail = lines.at(-1)!.index;
    this.#tails.set(sessionId, tail);
    this.#recent.push(sessionId, lines);
    this.#listeners.notify(sessionId, tail);
  }

  #tailOf(sessionId: string): number {
    let tail = this.#tails.get(sessionId);
    if (tail === undefined) {
      tail = this.#events.tail(sessionId);
      this.#tails.set(sessionId, tail);
    }
    return tail;
  }

  #getRecord(sessionId: string): SessionRecord | undefined {
    const row = this.#sql.getSession.get(sessionId) as { record: string } | undefined;
    return row && (JSON.parse(row.record) as SessionRecord);
  }

  #transaction<T>(work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }
}

function sessionRow(record: SessionRecord): [string, string, number, number | null] {
  return [record.id, JSON.stringify(record), record.activeTurn ? 1 : 0, record.status === 'ended' ? record.endedAt : null];
}
