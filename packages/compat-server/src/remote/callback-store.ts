import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { RemoteCaller } from './protocol.ts';

/** A parent's callback for one turn: the turn its message (`deliveryId`) started or steered, or, without one, the session's first turn. */
export interface CallerBinding {
  caller: RemoteCaller;
  deliveryId?: string;
  /** `outputSchema` sent with the message: the turn's output is the structured result. */
  structured?: boolean;
}

/**
 * What a session owes its remote callers: the bindings, and how far through the session's
 * journal the callbacks were delivered (`deliveredThrough`, a stream index; `turnFrom`, where the
 * turn holding the next undelivered event started, so its output and usage can be read again).
 */
export interface OwedCallbacks {
  sessionId: string;
  bindings: CallerBinding[];
  deliveredThrough: number;
  turnFrom: number;
}

/** The durable ledger of callbacks owed: written before the turn runs, advanced after each delivery. */
export interface CallbackStore {
  /** Set when several instances share the ledger: each delivers only what it `claim`s, and looks for what nobody holds. */
  readonly shared?: boolean;
  /** Takes, or renews, the right to deliver a session's callbacks; false while another instance holds it. Absent: always this process's. */
  claim?(sessionId: string): Promise<boolean>;
  /** Adds a binding (replacing one for the same message); a session new here starts owing from its first event. */
  bind(sessionId: string, binding: CallerBinding): Promise<void>;
  get(sessionId: string): Promise<OwedCallbacks | undefined>;
  list(): Promise<OwedCallbacks[]>;
  advance(sessionId: string, deliveredThrough: number, turnFrom: number): Promise<void>;
  drop(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

function withBinding(owed: OwedCallbacks | undefined, sessionId: string, binding: CallerBinding): OwedCallbacks {
  const base = owed ?? { sessionId, bindings: [], deliveredThrough: -1, turnFrom: 0 };
  return { ...base, bindings: [...base.bindings.filter((b) => b.deliveryId !== binding.deliveryId), binding] };
}

export class MemoryCallbackStore implements CallbackStore {
  readonly #owed = new Map<string, OwedCallbacks>();

  async bind(sessionId: string, binding: CallerBinding): Promise<void> {
    this.#owed.set(sessionId, withBinding(this.#owed.get(sessionId), sessionId, binding));
  }
  async get(sessionId: string): Promise<OwedCallbacks | undefined> {
    return this.#owed.get(sessionId);
  }
  async list(): Promise<OwedCallbacks[]> {
    return [...this.#owed.values()];
  }
  async advance(sessionId: string, deliveredThrough: number, turnFrom: number): Promise<void> {
    const owed = this.#owed.get(sessionId);
    if (owed) this.#owed.set(sessionId, { ...owed, deliveredThrough, turnFrom });
  }
  async drop(sessionId: string): Promise<void> {
    this.#owed.delete(sessionId);
  }
  async close(): Promise<void> {}
}

/** One row per session owing callbacks, in its own SQLite file (WAL, `synchronous=FULL`: a delivery is never forgotten). */
export class SqliteCallbackStore implements CallbackStore {
  readonly #db: DatabaseSync;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
    this.#db.exec('CREATE TABLE IF NOT EXISTS owed_callbacks (session_id TEXT PRIMARY KEY, state TEXT NOT NULL)');
  }

  #read(sessionId: string): OwedCallbacks | undefined {
    const row = this.#db.prepare('SELECT state FROM owed_callbacks WHERE session_id = ?').get(sessionId) as { state: string } | undefined;
    return row && (JSON.parse(row.state) as OwedCallbacks);
  }

  #write(owed: OwedCallbacks): void {
    this.#db
      .prepare('INSERT INTO owed_callbacks (session_id, state) VALUES (?, ?) ON CONFLICT(session_id) DO UPDATE SET state = excluded.state')
      .run(owed.sessionId, JSON.stringify(owed));
  }

  async bind(sessionId: string, binding: CallerBinding): Promise<void> {
    // node:sqlite is synchronous: this read and write run with nothing in between.
    this.#write(withBinding(this.#read(sessionId), sessionId, binding));
  }
  async get(sessionId: string): Promise<OwedCallbacks | undefined> {
    return this.#read(sessionId);
  }
  async list(): Promise<OwedCallbacks[]> {
    return (this.#db.prepare('SELECT state FROM owed_callbacks').all() as { state: string }[]).map((row) => JSON.parse(row.state) as OwedCallbacks);
  }
  async advance(sessionId: string, deliveredThrough: number, turnFrom: number): Promise<void> {
    const owed = this.#read(sessionId);
    if (owed) this.#write({ ...owed, deliveredThrough, turnFrom });
  }
  async drop(sessionId: string): Promise<void> {
    this.#db.prepare('DELETE FROM owed_callbacks WHERE session_id = ?').run(sessionId);
  }
  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }
}
