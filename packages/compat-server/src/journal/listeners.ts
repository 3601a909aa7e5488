import type { TailListener } from './journal.ts';

interface Listening {
  listeners: Set<TailListener>;
  /** The newest tail announced: one append heard twice (from the store and from this process) is announced once. */
  tail: number;
}

/**
 * In-process fan-out of "the tail moved" notifications, per session. A listener is added and
 * deleted by its session and itself, so a subscriber holds no unsubscribe closure of its own.
 */
export class TailListeners {
  readonly #bySession = new Map<string, Listening>();

  /** Adds `listener`; true when it is the session's first. */
  add(sessionId: string, listener: TailListener): boolean {
    const listening = this.#bySession.get(sessionId);
    if (listening) {
      listening.listeners.add(listener);
      return false;
    }
    this.#bySession.set(sessionId, { listeners: new Set([listener]), tail: -1 });
    return true;
  }

  /** Deletes `listener`; true when it was the session's last. */
  delete(sessionId: string, listener: TailListener): boolean {
    const listening = this.#bySession.get(sessionId);
    if (!listening?.listeners.delete(listener) || listening.listeners.size > 0) return false;
    this.#bySession.delete(sessionId);
    return true;
  }

  /** No listener of any session. */
  get empty(): boolean {
    return this.#bySession.size === 0;
  }

  notify(sessionId: string, tail: number): void {
    const listening = this.#bySession.get(sessionId);
    if (!listening || tail <= listening.tail) return;
    listening.tail = tail;
    for (const listener of [...listening.listeners]) listener.appended(tail);
  }

  /** Tells every listener of every session that notifications may have gone unheard. */
  lost(): void {
    const all = [...this.#bySession.values()].flatMap(({ listeners }) => [...listeners]);
    for (const listener of all) listener.lost?.();
  }
}
