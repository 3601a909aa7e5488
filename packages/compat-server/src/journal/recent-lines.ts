import type { JournalLine } from './journal.ts';

const LINES_PER_SESSION = 512;
const SESSIONS = 512;

/**
 * The newest lines of recently written sessions, so that live readers catching up by a few
 * events are served from memory instead of the store. Bounded in both directions.
 */
export class RecentLines {
  readonly #windows = new Map<string, JournalLine[]>();

  /** Adds newly appended lines; a gap (another process appended in between) starts a new window. */
  push(sessionId: string, lines: readonly JournalLine[]): void {
    let window = this.#windows.get(sessionId);
    if (window) this.#windows.delete(sessionId);
    if (!window || window.at(-1)!.index + 1 !== lines[0]?.index) window = [];
    window.push(...lines);
    if (window.length > LINES_PER_SESSION) window.splice(0, window.length - LINES_PER_SESSION);
    this.#windows.set(sessionId, window);
    if (this.#windows.size > SESSIONS) this.#windows.delete(this.#windows.keys().next().value as string);
  }

  /** The lines from `from`, or undefined when the window does not start early enough to serve them. */
  read(sessionId: string, from: number, limit: number): JournalLine[] | undefined {
    const window = this.#windows.get(sessionId);
    const start = window?.[0]?.index;
    if (!window || start === undefined || from < start) return undefined;
    return window.slice(from - start, from - start + limit);
  }

  forget(sessionId: string): void {
    this.#windows.delete(sessionId);
  }
}
