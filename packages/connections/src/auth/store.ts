import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Sealer } from './sealer.ts';
import type { PendingFlow, RegisteredClient, SubjectKey, TokenSet } from './types.ts';

/** Server-side storage for sign-ins. Every value is sealed before it reaches the store. */
export interface AuthStore {
  getToken(subject: SubjectKey, connection: string): Promise<TokenSet | undefined>;
  putToken(subject: SubjectKey, connection: string, tokens: TokenSet): Promise<void>;
  deleteToken(subject: SubjectKey, connection: string): Promise<void>;
  putFlow(flow: PendingFlow): Promise<void>;
  getFlow(id: string): Promise<PendingFlow | undefined>;
  /**
   * Binds a flow to the first browser that opens it, in one step: `bound` for the first caller,
   * `owned` when another browser bound it first, `gone` when the flow was taken meanwhile.
   */
  bindFlow(id: string, bindingHash: string): Promise<FlowBinding>;
  /** Removes and returns a flow in one step: of two concurrent takers, one gets it. */
  takeFlow(id: string): Promise<PendingFlow | undefined>;
  getClient(key: string): Promise<RegisteredClient | undefined>;
  putClient(key: string, client: RegisteredClient): Promise<void>;
  close(): Promise<void>;
}

export type FlowBinding = 'bound' | 'owned' | 'gone';

/** SQLite (`node:sqlite`) storage; `:memory:` for a store that dies with the process. */
export class SqliteAuthStore implements AuthStore {
  readonly #db: DatabaseSync;
  readonly #sealer: Sealer;
  readonly #sql: Record<string, StatementSync>;

  constructor(file: string, sealer: Sealer) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    this.#sealer = sealer;
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      CREATE TABLE IF NOT EXISTS tokens (subject TEXT NOT NULL, connection TEXT NOT NULL, sealed TEXT NOT NULL, PRIMARY KEY (subject, connection));
      CREATE TABLE IF NOT EXISTS flows (id TEXT PRIMARY KEY, sealed TEXT NOT NULL, expires_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS clients (key TEXT PRIMARY KEY, sealed TEXT NOT NULL);
    `);
    const db = this.#db;
    this.#sql = {
      getToken: db.prepare('SELECT sealed FROM tokens WHERE subject = ? AND connection = ?'),
      putToken: db.prepare(
        'INSERT INTO tokens (subject, connection, sealed) VALUES (?, ?, ?) ON CONFLICT(subject, connection) DO UPDATE SET sealed = excluded.sealed',
      ),
      deleteToken: db.prepare('DELETE FROM tokens WHERE subject = ? AND connection = ?'),
      putFlow: db.prepare('INSERT INTO flows (id, sealed, expires_at) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET sealed = excluded.sealed'),
      getFlow: db.prepare('SELECT sealed FROM flows WHERE id = ?'),
      updateFlow: db.prepare('UPDATE flows SET sealed = ? WHERE id = ?'),
      takeFlow: db.prepare('DELETE FROM flows WHERE id = ? RETURNING sealed'),
      sweepFlows: db.prepare('DELETE FROM flows WHERE expires_at < ?'),
      getClient: db.prepare('SELECT sealed FROM clients WHERE key = ?'),
      putClient: db.prepare('INSERT INTO clients (key, sealed) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET sealed = excluded.sealed'),
    };
  }

  async getToken(subject: SubjectKey, connection: string): Promise<TokenSet | undefined> {
    const row = this.#sql.getToken!.get(subject, connection) as { sealed: string } | undefined;
    return row && this.#sealer.openOrForget<TokenSet>(row.sealed, `token:${subject}:${connection}`);
  }

  async putToken(subject: SubjectKey, connection: string, tokens: TokenSet): Promise<void> {
    this.#sql.putToken!.run(subject, connection, this.#sealer.seal(tokens, `token:${subject}:${connection}`));
  }

  async deleteToken(subject: SubjectKey, connection: string): Promise<void> {
    this.#sql.deleteToken!.run(subject, connection);
  }

  async putFlow(flow: PendingFlow): Promise<void> {
    // Flows a day past expiry are of no use to anyone: sweep them as new ones arrive.
    this.#sql.sweepFlows!.run(Date.now() - 24 * 60 * 60 * 1000);
    this.#sql.putFlow!.run(flow.id, this.#sealer.seal(flow, `flow:${flow.id}`), flow.expiresAt);
  }

  async getFlow(id: string): Promise<PendingFlow | undefined> {
    const row = this.#sql.getFlow!.get(id) as { sealed: string } | undefined;
    return row && this.#sealer.open<PendingFlow>(row.sealed, `flow:${id}`);
  }

  async bindFlow(id: string, bindingHash: string): Promise<FlowBinding> {
    // Read, check and write without yielding: no other request of this process runs in between.
    const row = this.#sql.getFlow!.get(id) as { sealed: string } | undefined;
    if (!row) return 'gone';
    const flow = this.#sealer.open<PendingFlow>(row.sealed, `flow:${id}`);
    if (flow.bindingHash) return 'owned';
    this.#sql.updateFlow!.run(this.#sealer.seal({ ...flow, bindingHash }, `flow:${id}`), id);
    return 'bound';
  }

  async takeFlow(id: string): Promise<PendingFlow | undefined> {
    const row = this.#sql.takeFlow!.get(id) as { sealed: string } | undefined;
    return row && this.#sealer.openOrForget<PendingFlow>(row.sealed, `flow:${id}`);
  }

  async getClient(key: string): Promise<RegisteredClient | undefined> {
    const row = this.#sql.getClient!.get(key) as { sealed: string } | undefined;
    return row && this.#sealer.openOrForget<RegisteredClient>(row.sealed, `client:${key}`);
  }

  async putClient(key: string, client: RegisteredClient): Promise<void> {
    this.#sql.putClient!.run(key, this.#sealer.seal(client, `client:${key}`));
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }
}
