import { StoreUnavailableError } from './errors.ts';
import type { Journal, JournalLine, TailListener } from './journal.ts';

const PAGE = 256;

export interface FollowRange {
  /** Absolute index of the first event to send. */
  from: number;
  /** Stop after this index (inclusive); follow live appends until closed when absent. */
  until?: number;
}

/** Where a follower sends a session's lines: a stream's transport. */
export interface FollowSink {
  /**
   * Takes the next page (every line there was when the follower read, up to 256, in order);
   * false when the reader is full: nothing more is sent until `resume()`.
   */
  write(page: readonly JournalLine[]): boolean;
  /** The follow is over: `until` was reached, or reading failed (`error`). Not called after `close()`. */
  end(error?: unknown): void;
}

/** Who hears that a session gained a follower here, and lost one (what keeps it resident). */
export interface FollowWatch {
  followed(sessionId: string): void;
  unfollowed(sessionId: string): void;
}

/**
 * Sends a session's journal to one reader in order from `from`, then live appends as they land.
 * Pulls pages from the journal at the reader's pace, so a slow reader holds no queue: it reads
 * further behind the tail. Between appends it holds nothing but its place in the journal's
 * listeners: no pending promise, no timer (unless the journal polls), no closure.
 */
export class JournalFollower implements TailListener {
  readonly #journal: Journal;
  readonly #sessionId: string;
  readonly #sink: FollowSink;
  readonly #until: number | undefined;
  readonly #watch: FollowWatch | undefined;
  #cursor: number;
  /** The newest tail an append notification announced. */
  #knownTail = -1;
  /**
   * Until a read comes back empty, the follower reads on after every page: the tail is not known
   * (a store's cache of recent lines misses what another instance appended). Once caught up,
   * notifications say how far to read, and a page that reaches the announced tail ends the pull
   * without one more read. A poll (notifications may have been missed) catches up again.
   */
  #catchingUp = true;
  #reading = false;
  #paused = false;
  #closed = false;
  #lost = false;
  #poll: NodeJS.Timeout | undefined;

  constructor(journal: Journal, sessionId: string, range: FollowRange, sink: FollowSink, watch?: FollowWatch) {
    this.#journal = journal;
    this.#sessionId = sessionId;
    this.#sink = sink;
    this.#cursor = range.from;
    this.#until = range.until;
    this.#watch = watch;
    watch?.followed(sessionId);
    journal.subscribe(sessionId, this);
    void this.#pull();
  }

  /** After `write` answered false: the reader has room again. */
  resume(): void {
    this.#paused = false;
    void this.#pull();
  }

  /** Stops following; the sink hears nothing more. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#poll);
    this.#journal.unsubscribe(this.#sessionId, this);
    this.#watch?.unfollowed(this.#sessionId);
  }

  appended(tail: number): void {
    if (tail > this.#knownTail) this.#knownTail = tail;
    // Already sent (the notification of an append this reader has read past).
    if (tail < this.#cursor) return;
    void this.#pull();
  }

  lost(): void {
    this.#lost = true;
    void this.#pull();
  }

  async #pull(): Promise<void> {
    if (this.#reading || this.#paused || this.#closed) return;
    this.#reading = true;
    clearTimeout(this.#poll);
    try {
      while (!this.#closed && !this.#paused) {
        if (this.#lost) throw new StoreUnavailableError('The session store connection dropped.');
        const until = this.#until;
        if (until !== undefined && this.#cursor > until) return this.#finish();
        const limit = until === undefined ? PAGE : Math.min(PAGE, until - this.#cursor + 1);
        const page = await this.#journal.read(this.#sessionId, this.#cursor, limit);
        if (this.#closed) return;
        if (page.length > 0) {
          this.#cursor = page.at(-1)!.index + 1;
          if (!this.#sink.write(page)) this.#paused = true;
          if (this.#catchingUp || page.length === limit || this.#cursor <= this.#knownTail) continue;
          break;
        }
        if (this.#cursor <= this.#knownTail || this.#lost) continue;
        this.#catchingUp = false;
        if (until !== undefined) return this.#finish();
        break;
      }
    } catch (error) {
      if (this.#closed) return;
      this.close();
      this.#sink.end(error);
      return;
    } finally {
      this.#reading = false;
    }
    // Caught up: wait for the next append notification, and look again when they can be lost.
    const poll = this.#journal.pollIntervalMs;
    if (poll && !this.#closed && !this.#paused) {
      this.#poll = setTimeout(() => {
        this.#catchingUp = true;
        void this.#pull();
      }, poll);
      this.#poll.unref();
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.close();
    this.#sink.end();
  }
}
