import type { TailListener } from './journal.ts';

/**
 * In-process fan-out of "the tail moved" notifications, per session. A listener is added and
 * deleted by its session and itself, so a subscriber holds no unsubscribe closure of its own.
 */
export class TailListeners {
  readonly #bySession = new Map<string, Set<TailListener>>();

  /** Adds `listener`; true when it is the session's first. */
  add(sessionId: string, listener: TailListener): boolean {
    const set = this.#bySession.get(sessionId);
    if (set) {
      set.add(listener);
      return false;
    }
    this.#bySession.set(sessionId, new Set([listener]));
    return true;
  }

  /** Deletes `listener`; true when it was the session's last. */
  delete(sessionId: string, listener: TailListener): boolean {
    const set = this.#bySession.get(sessionId);
    if (!set?.delete(listener) || set.size > 0) return false;
    this.#bySession.delete(sessionId);
    return true;
  }

  /** No listener of any session. */
  get empty(): boolean {
    return this.#bySession.size === 0;
  }

  notify(sessionId: string, tail: number): void {
    const set = this.#bySession.get(sessionId);
    if (!set) return;
    for (const listener of [...set]) listener.appended(tail);
  }

  /** Tells every listener of every session that notifications may have gone unheard. */
  lost(): void {
    const all = [...this.#bySession.values()].flatMap((set) => [...set]);
    for (const listener of all) listener.lost?.();
  }
}
