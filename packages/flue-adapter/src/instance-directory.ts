import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/**
 * Which Flue instance holds each Eve session's conversation. Flue has no way to empty an
 * instance's history, so clearing a session moves it to a fresh instance (a new generation);
 * the mapping is persisted so that a restart keeps every session on its current instance.
 */
export class InstanceDirectory {
  readonly #generations = new Map<string, number>();
  readonly #sessions = new Map<string, string>();
  readonly #db: DatabaseSync | undefined;

  /** `file` undefined keeps the directory in memory. */
  constructor(file?: string) {
    if (!file) return;
    mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    this.#db.exec('CREATE TABLE IF NOT EXISTS generations (session_id TEXT PRIMARY KEY, generation INTEGER NOT NULL)');
    for (const row of this.#db.prepare('SELECT session_id, generation FROM generations').all() as { session_id: string; generation: number }[]) {
      this.#generations.set(row.session_id, row.generation);
    }
  }

  /** The instance id serving a session now. */
  instanceFor(sessionId: string): string {
    const id = `${sessionId}-g${this.#generations.get(sessionId) ?? 0}`;
    this.#sessions.set(id, sessionId);
    return id;
  }

  /** The session an instance serves, for instances this process addressed. */
  sessionOf(instanceId: string): string | undefined {
    return this.#sessions.get(instanceId);
  }

  /** Moves a session to a fresh instance: the next turn starts with no history. */
  advance(sessionId: string): void {
    const next = (this.#generations.get(sessionId) ?? 0) + 1;
    this.#generations.set(sessionId, next);
    this.#db?.prepare('INSERT INTO generations (session_id, generation) VALUES (?, ?) ON CONFLICT(session_id) DO UPDATE SET generation = excluded.generation').run(sessionId, next);
  }

  /** The session ended: nothing will address its instances again. */
  forget(sessionId: string): void {
    for (const [instanceId, owner] of this.#sessions) if (owner === sessionId) this.#sessions.delete(instanceId);
  }

  close(): void {
    if (this.#db?.isOpen) this.#db.close();
  }
}
