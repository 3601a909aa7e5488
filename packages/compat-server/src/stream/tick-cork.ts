import type { Writable } from 'node:stream';

/**
 * Holds a socket's writes until the next tick, so that everything queued for it in one tick
 * (a page of WebSocket frames) leaves in one `writev`, instead of one write per frame.
 * Ending or destroying the socket while held loses nothing: `end()` flushes corked writes.
 */
export class TickCork {
  readonly #socket: Writable;
  #held = false;
  readonly #release = () => {
    this.#held = false;
    this.#socket.uncork();
  };

  constructor(socket: Writable) {
    this.#socket = socket;
  }

  hold(): void {
    if (this.#held) return;
    this.#held = true;
    this.#socket.cork();
    process.nextTick(this.#release);
  }
}
