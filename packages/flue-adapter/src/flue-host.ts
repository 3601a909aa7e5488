import type { PersistenceAdapter } from '@flue/runtime/adapter';
import { start, type StartOptions } from '@flue/runtime/node';
import type { Logger } from '@eve-flue/session-contract';

export interface FlueHostOptions {
  agents: StartOptions['agents'];
  providers?: StartOptions['providers'];
  /** Kept open across restarts (Flue would close it with each); `stop()` closes it. */
  db: PersistenceAdapter;
  /** Restart Flue once this many instances were released since it started. */
  recycleAfter: number;
  /** How long new work waits for the work in Flue to end before a restart is put off. */
  drainMs: number;
  logger: Logger;
}

/**
 * Flue's runtime in this process, restarted now and then to let go of the instances it served.
 * Flue's coordinator keeps, for every agent instance that ever ran, its conversation writer (the
 * whole conversation folded in memory), an event emitter and an MCP connection cache, until the
 * runtime stops, and has no API to drop one (about 10 KiB for a one-turn conversation; see
 * bench/flue-soak.ts). Everything durable is in `db`, so a restart loses nothing: like a process
 * restart, without the process. Once `recycleAfter` instances were released, new work waits at
 * the door while the work inside ends (at most `drainMs`; otherwise the restart is put off), then
 * Flue is stopped and started again on the same store.
 */
export class FlueHost {
  readonly #options: FlueHostOptions;
  readonly #db: PersistenceAdapter;
  #flue: { stop(): Promise<void> };
  /** Work inside Flue now (turns, aborts). */
  #active = 0;
  #released = 0;
  #threshold: number;
  /** Set while a restart waits for the work inside to end, or runs: new work waits for it. */
  #door: PromiseWithResolvers<void> | undefined;
  #drained: (() => void) | undefined;
  /** The last restart stopped Flue but could not start it again. */
  #down = false;

  private constructor(options: FlueHostOptions, flue: { stop(): Promise<void> }, db: PersistenceAdapter) {
    this.#options = options;
    this.#flue = flue;
    this.#db = db;
    this.#threshold = options.recycleAfter;
  }

  static async start(options: FlueHostOptions): Promise<FlueHost> {
    // Flue closes its store when it stops: this one stays open until the host stops.
    const { close: _, ...db } = options.db;
    return new FlueHost(options, await boot(options, db), db);
  }

  /** Runs `work` inside Flue, once no restart is under way. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    for (let tried = false; ; tried = true) {
      while (this.#door) await this.#door.promise;
      // Flue did not come back from the last restart: one more try before this work (which fails without it).
      if (!this.#down || tried) break;
      await this.#restart();
    }
    this.#active += 1;
    try {
      return await work();
    } finally {
      this.#active -= 1;
      if (this.#active === 0) this.#drained?.();
    }
  }

  /** An instance will not be used again soon (its session was evicted). */
  released(): void {
    this.#released += 1;
    if (this.#released >= this.#threshold && !this.#door) void this.#restart();
  }

  async stop(): Promise<void> {
    while (this.#door) await this.#door.promise;
    await this.#flue.stop();
    await this.#options.db.close?.();
  }

  async #restart(): Promise<void> {
    const door = (this.#door = Promise.withResolvers<void>());
    try {
      if (!(await this.#drain())) {
        // Long work inside: try again after a quarter more releases.
        this.#threshold = this.#released + Math.ceil(this.#options.recycleAfter / 4);
        return;
      }
      const released = this.#released;
      await this.#flue.stop();
      this.#flue = await boot(this.#options, this.#db);
      this.#released = 0;
      this.#threshold = this.#options.recycleAfter;
      this.#down = false;
      this.#options.logger.info({ released }, 'restarted Flue to let go of the instances it served');
    } catch (error) {
      this.#down = true;
      this.#options.logger.error({ err: error }, 'could not restart Flue; trying again before the next turn');
    } finally {
      this.#door = undefined;
      door.resolve();
    }
  }

  /** True once no work is inside, false when `drainMs` passed first. */
  #drain(): Promise<boolean> {
    if (this.#active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#drained = undefined;
        resolve(false);
      }, this.#options.drainMs);
      this.#drained = () => {
        clearTimeout(timer);
        this.#drained = undefined;
        resolve(true);
      };
    });
  }
}

function boot(options: FlueHostOptions, db: PersistenceAdapter): Promise<{ stop(): Promise<void> }> {
  return start({ agents: options.agents, db, ...(options.providers ? { providers: options.providers } : {}) });
}
