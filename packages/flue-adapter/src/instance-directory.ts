import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** Where each session's generation (how often it was cleared) is kept: one process, or shared. */
export interface GenerationStore {
  get(sessionId: string): Promise<number | undefined>;
  set(sessionId: string, generation: number): Promise<void>;
  close(): void | Promise<void>;
}

/**
 * Which Flue instance holds each Eve session's conversation. Flue has no way to empty an
 * instance's history, so clearing a session moves it to a fresh instance (a new generation);
 * the generation is persisted so that a restart, or another instance on a shared store, keeps
 * every session on its current instance.
 */
export class InstanceDirectory {
  readonly #store: GenerationStore;
  /** The instance each session was last addressed at here. */
  readonly #current = new Map<string, string>();

  constructor(store: GenerationStore) {
    this.#store = store;
  }

  /** The instance id serving a session now. */
  async instanceFor(sessionId: string): Promise<string> {
    const id = instanceIdOf(sessionId, (await this.#store.get(sessionId)) ?? 0);
    this.#current.set(sessionId, id);
    return id;
  }

  /** The instance a session was last addressed at in this process. */
  current(sessionId: string): string | undefined {
    return this.#current.get(sessionId);
  }

  /** Moves a session to a fresh instance: the next turn starts with no history. */
  async advance(sessionId: string): Promise<void> {
    await this.#store.set(sessionId, ((await this.#store.get(sessionId)) ?? 0) + 1);
  }

  /** The session ended: nothing will address its instances again. */
  forget(sessionId: string): void {
    this.#current.delete(sessionId);
  }

  close(): Promise<void> {
    return Promise.resolve(this.#store.close());
  }
}

function instanceIdOf(sessionId: string, generation: number): string {
  return `${sessionId}-g${generation}`;
}

/** The session a Flue instance id belongs to, for any instance id this directory minted. */
export function sessionOfInstance(instanceId: string): string {
  return instanceId.replace(/-g\d+$/, '');
}

/** Generations in a SQLite file (`file` undefined: in memory, gone with the process). */
export class SqliteGenerations implements GenerationStore {
  readonly #db: DatabaseSync;

  constructor(file?: string) {
    if (file) mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file ?? ':memory:');
    this.#db.exec('CREATE TABLE IF NOT EXISTS generations (session_id TEXT PRIMARY KEY, generation INTEGER NOT NULL)');
  }

  async get(sessionId: string): Promise<number | undefined> {
    const row = this.#db.prepare('SELECT generation FROM generations WHERE session_id = ?').get(sessionId) as { generation: number } | undefined;
    return row?.generation;
  }

  async set(sessionId: string, generation: number): Promise<void> {
    this.#db
      .prepare('INSERT INTO generations (session_id, generation) VALUES (?, ?) ON CONFLICT(session_id) DO UPDATE SET generation = excluded.generation')
      .run(sessionId, generation);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
