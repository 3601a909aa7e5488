import type { JournalLine } from './journal.ts';

/** How much the cache may hold, in bytes of journal text (counted as UTF-16 units: one per byte of ASCII JSON). */
export interface RecentLinesBudget {
  /** One session's window. Default 1 MiB: a line longer than that is read from the store. */
  sessionBytes: number;
  /** Every window together; the least recently written sessions go first. Default 32 MiB. */
  totalBytes: number;
}

export const DEFAULT_RECENT_LINES_BUDGET: RecentLinesBudget = { sessionBytes: 1024 * 1024, totalBytes: 32 * 1024 * 1024 };

interface Window {
  lines: JournalLine[];
  bytes: number;
}

/**
 * The newest lines of recently written sessions, so that live readers catching up by a few
 * events are served from memory instead of the store. Bounded in bytes, per session and in all.
 */
export class RecentLines {
  readonly #windows = new Map<string, Window>();
  readonly #budget: RecentLinesBudget;
  #bytes = 0;

  constructor(budget: RecentLinesBudget = DEFAULT_RECENT_LINES_BUDGET) {
    this.#budget = budget;
  }

  /** Adds newly appended lines; a gap (another process appended in between) starts a new window. */
  push(sessionId: string, lines: readonly JournalLine[]): void {
    if (lines.length === 0) return;
    let window = this.#windows.get(sessionId);
    if (window) this.#remove(sessionId);
    if (!window || window.lines.at(-1)!.index + 1 !== lines[0]!.index) window = { lines: [], bytes: 0 };
    for (const line of lines) {
      window.lines.push(line);
      window.bytes += line.line.length;
    }
    // Oldest lines leave first; the window always ends at the newest line it can hold.
    let drop = 0;
    while (drop < window.lines.length && window.bytes > this.#budget.sessionBytes) window.bytes -= window.lines[drop++]!.line.length;
    if (drop > 0) window.lines.splice(0, drop);
    if (window.lines.length === 0) return;
    this.#windows.set(sessionId, window);
    this.#bytes += window.bytes;
    for (const [oldest] of this.#windows) {
      if (this.#bytes <= this.#budget.totalBytes) break;
      this.#remove(oldest);
    }
  }

  /** The lines from `from`, or undefined when the window does not start early enough to serve them. */
  read(sessionId: string, from: number, limit: number): JournalLine[] | undefined {
    const lines = this.#windows.get(sessionId)?.lines;
    const start = lines?.[0]?.index;
    if (!lines || start === undefined || from < start) return undefined;
    return lines.slice(from - start, from - start + limit);
  }

  /** The index after the newest line held for the session: where its next append lands, unless another process appended since. */
  next(sessionId: string): number | undefined {
    const last = this.#windows.get(sessionId)?.lines.at(-1);
    return last && last.index + 1;
  }

  forget(sessionId: string): void {
    this.#remove(sessionId);
  }

  #remove(sessionId: string): void {
    const window = this.#windows.get(sessionId);
    if (!window) return;
    this.#windows.delete(sessionId);
    this.#bytes -= window.bytes;
  }
}
