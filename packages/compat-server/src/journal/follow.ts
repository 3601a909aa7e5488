import { StoreUnavailableError } from './errors.ts';
import type { Journal, JournalLine } from './journal.ts';

const PAGE = 256;

export interface FollowOptions {
  /** Absolute index of the first event to yield. */
  from: number;
  /** Stop after this index (inclusive); follow live appends forever when absent. */
  until?: number;
  signal: AbortSignal;
}

/**
 * Yields a session's journal lines in order from `from`, then live appends as they land.
 * Readers pull pages from the journal at their own pace, so a slow reader holds no queue in
 * memory: it simply reads further behind the tail.
 */
export async function* followJournal(journal: Journal, sessionId: string, options: FollowOptions): AsyncGenerator<JournalLine> {
  for await (const page of followJournalPages(journal, sessionId, options)) yield* page;
}

/**
 * `followJournal` a page at a time (every line that was there when it read, up to 256), for
 * writers that send a page in one write.
 */
export async function* followJournalPages(journal: Journal, sessionId: string, options: FollowOptions): AsyncGenerator<JournalLine[]> {
  const { signal, until } = options;
  let cursor = options.from;
  let knownTail = -1;
  let wake: (() => void) | undefined;
  let lost = false;
  const unsubscribe = journal.subscribe(
    sessionId,
    (tail) => {
      knownTail = Math.max(knownTail, tail);
      wake?.();
    },
    () => {
      lost = true;
      wake?.();
    },
  );
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    while (!signal.aborted && (until === undefined || cursor <= until)) {
      if (lost) throw new StoreUnavailableError('The session store connection dropped.');
      const limit = until === undefined ? PAGE : Math.min(PAGE, until - cursor + 1);
      const page = await journal.read(sessionId, cursor, limit);
      if (page.length > 0) {
        if (signal.aborted) return;
        yield page;
        cursor = page.at(-1)!.index + 1;
        continue;
      }
      if (cursor <= knownTail) continue;
      if (until !== undefined) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (signal.aborted || lost || knownTail >= cursor) resolve();
        else if (journal.pollIntervalMs) setTimeout(resolve, journal.pollIntervalMs).unref();
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', onAbort);
  }
}
