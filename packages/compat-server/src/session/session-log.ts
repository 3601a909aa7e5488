import type { EveEvent, EveEventDraft } from '@eve-flue/eve-protocol';
import type { Journal, SessionRecord } from '../journal/journal.ts';

/**
 * One session's writer: appends run strictly in call order, each batch with the delivery ids
 * and record it was called with, even when the journal itself is asynchronous.
 */
export class SessionLog {
  readonly #journal: Journal;
  readonly sessionId: string;
  #last: Promise<unknown> = Promise.resolve();

  constructor(journal: Journal, sessionId: string) {
    this.#journal = journal;
    this.sessionId = sessionId;
  }

  write(drafts: readonly EveEventDraft[], deliveryIds: readonly string[] = [], record?: SessionRecord): Promise<EveEvent[]> {
    const batch = { deliveryIds: [...deliveryIds], ...(record ? { record: structuredClone(record) } : {}) };
    const written = this.#last.then(() => this.#journal.append(this.sessionId, drafts, batch));
    this.#last = written.catch(() => undefined);
    return written;
  }
}
