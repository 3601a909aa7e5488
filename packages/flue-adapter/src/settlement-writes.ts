import type { PersistenceAdapter } from '@flue/runtime/adapter';
import { overridingSubmissionStore } from './store-overrides.ts';

/** Writes owed at once, at most: past it the oldest is let go (its turn ends without waiting). */
const MAX_OWED = 10_000;

/**
 * Flue reports a submission settled before it has written it settled: it reserves the settlement,
 * appends the durable record, publishes `submission_settled`, and only then finalizes the
 * submission's row. A turn that ended on the event alone would leave that last write behind it.
 * Should the store go away in between (an outage, Flue stopped for a restart or a shutdown), the
 * row stays leased and the session's next message waits for Flue's lease to lapse and its scan to
 * finalize it: 30 to 45 seconds. This keeps track of the rows Flue owes a write, so a turn ends
 * once they are written (or their write failed: Flue's recovery finalizes them later).
 */
export class SettlementWrites {
  readonly #owed = new Map<string, PromiseWithResolvers<void>>();

  /** `adapter`, its settlement reservations and finalizations seen here. */
  watch(adapter: PersistenceAdapter): PersistenceAdapter {
    return overridingSubmissionStore(adapter, (inner) => ({
      reserveSubmissionSettlement: async (attempt, settlement) => {
        const obligation = await inner.reserveSubmissionSettlement(attempt, settlement);
        if (obligation) this.#owe(attempt.submissionId);
        return obligation;
      },
      finalizeSubmissionSettlement: async (attempt, recordId, options) => {
        try {
          return await inner.finalizeSubmissionSettlement(attempt, recordId, options);
        } finally {
          this.#paid(attempt.submissionId);
        }
      },
    }));
  }

  /** Resolves once no write Flue owes the row of `submissionId` is left. */
  written(submissionId: string): Promise<void> {
    return this.#owed.get(submissionId)?.promise ?? Promise.resolve();
  }

  #owe(submissionId: string): void {
    if (this.#owed.has(submissionId)) return;
    if (this.#owed.size >= MAX_OWED) this.#paid(this.#owed.keys().next().value!);
    this.#owed.set(submissionId, Promise.withResolvers<void>());
  }

  #paid(submissionId: string): void {
    this.#owed.get(submissionId)?.resolve();
    this.#owed.delete(submissionId);
  }
}
