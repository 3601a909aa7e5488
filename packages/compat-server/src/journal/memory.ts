import { envelope, type EveEvent, type EveEventDraft } from '@eve-flue/eve-protocol';
import { serializeEvent, type AppendOptions, type Journal, type JournalLine, type SessionRecord, type TailListener } from './journal.ts';
import { TailListeners } from './listeners.ts';

/** A journal that lives and dies with the process: for tests and throwaway runs. */
export class MemoryJournal implements Journal {
  readonly #records = new Map<string, SessionRecord>();
  readonly #events = new Map<string, JournalLine[]>();
  readonly #operations = new Map<string, string>();
  readonly #listeners = new TailListeners();

  async createSession(record: SessionRecord, operationKey?: string): Promise<SessionRecord> {
    if (operationKey !== undefined) {
      const existing = this.#operations.get(operationKey);
      const existingRecord = existing === undefined ? undefined : this.#records.get(existing);
      if (existingRecord?.status === 'open') return structuredClone(existingRecord);
      this.#operations.set(operationKey, record.id);
    }
    this.#records.set(record.id, structuredClone(record));
    this.#events.set(record.id, []);
    return structuredClone(record);
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const record = this.#records.get(sessionId);
    return record && structuredClone(record);
  }

  async listInterrupted(): Promise<SessionRecord[]> {
    return [...this.#records.values()].filter((r) => r.activeTurn !== undefined).map((r) => structuredClone(r));
  }

  async listEndedBefore(cutoff: number): Promise<string[]> {
    return [...this.#records.values()]
      .filter((r) => r.status === 'ended' && !r.eventsDropped && (r.endedAt ?? 0) < cutoff)
      .map((r) => r.id);
  }

  async dropEvents(sessionId: string): Promise<void> {
    const record = this.#records.get(sessionId);
    if (record) record.eventsDropped = true;
    this.#events.set(sessionId, []);
    for (const [key, id] of this.#operations) if (id === sessionId) this.#operations.delete(key);
  }

  async append(sessionId: string, drafts: readonly EveEventDraft[], options: AppendOptions = {}): Promise<EveEvent[]> {
    const log = this.#events.get(sessionId);
    if (!log) throw new Error(`No session ${sessionId} in the journal.`);
    const events = drafts.map((draft, i) => envelope(draft, log.length + i, options.deliveryIds));
    log.push(...events.map(serializeEvent));
    if (options.record) this.#records.set(sessionId, structuredClone(options.record));
    if (events.length > 0) this.#listeners.notify(sessionId, log.length - 1);
    return events;
  }

  async read(sessionId: string, from: number, limit: number): Promise<JournalLine[]> {
    return (this.#events.get(sessionId) ?? []).slice(from, from + limit);
  }

  async tail(sessionId: string): Promise<number> {
    return (this.#events.get(sessionId)?.length ?? 0) - 1;
  }

  subscribe(sessionId: string, listener: TailListener): void {
    this.#listeners.add(sessionId, listener);
  }

  unsubscribe(sessionId: string, listener: TailListener): void {
    this.#listeners.delete(sessionId, listener);
  }

  async close(): Promise<void> {}
}
