/** What the registry asks of each open stream. */
export interface Heartbeating {
  /** Called every `sweepMs`: send a heartbeat if the stream has been silent, drop a peer that stopped answering. */
  beat(now: number): void;
}

/**
 * The open streams of one transport, and one timer for all their heartbeats (instead of one per
 * stream: an idle stream holds no timer of its own), sweeping every half `heartbeatMs` (at least
 * every 50 ms). The timer runs only while a stream is open.
 */
export class OpenStreams<S extends Heartbeating> {
  readonly #streams = new Set<S>();
  /** How often every stream's `beat` runs; a stream's silence is seen up to this late. */
  readonly sweepMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(heartbeatMs: number) {
    this.sweepMs = Math.max(50, Math.floor(heartbeatMs / 2));
  }

  add(stream: S): void {
    this.#streams.add(stream);
    if (!this.#timer) {
      this.#timer = setInterval(this.#sweep, this.sweepMs);
      this.#timer.unref();
    }
  }

  delete(stream: S): void {
    this.#streams.delete(stream);
    if (this.#streams.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Every open stream; safe to close them while iterating. */
  all(): S[] {
    return [...this.#streams];
  }

  readonly #sweep = (): void => {
    const now = Date.now();
    for (const stream of this.#streams) stream.beat(now);
  };
}
