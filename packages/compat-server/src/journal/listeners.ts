import type { TailListener } from './journal.ts';

/** In-process fan-out of "the tail moved" notifications, per session. */
export class TailListeners {
  readonly #bySession = new Map<string, Set<TailListener>>();

  add(sessionId: string, listener: TailListener): () => void {
    let set = this.#bySession.get(sessionId);
    if (!set) this.#bySession.set(sessionId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#bySession.delete(sessionId);
    };
  }

  notify(sessionId: string, tail: number): void {
    const set = this.#bySession.get(sessionId);
    if (!set) return;
    for (const listener of [...set]) listener.appended(tail);
  }
}
