/** Why a resident session left memory. */
export type EvictionReason = 'idle' | 'capacity';

export interface ResidencyOptions {
  /** How long a session may sit idle in memory before it is evicted. */
  idleMs: number;
  /** The most sessions kept in memory; past it, the least recently used idle ones are evicted. */
  maxResident: number;
  /** Drops what this process holds for the session; the next use reloads it from the stores. */
  evict: (sessionId: string) => Promise<void>;
  /** Hears each eviction (metrics). */
  onEvicted?: (reason: EvictionReason) => void;
  onError: (error: unknown, sessionId: string) => void;
  now?: () => number;
}

interface Resident {
  /** Work of the session runs here (a turn, parked on a sign-in or an approval or not, or work queued). */
  busy: boolean;
  /** Streams of the session open here. */
  streams: number;
  lastUsed: number;
}

/**
 * Which sessions this process keeps in memory (their agent instance, MCP clients, caches), and
 * when each leaves: after `idleMs` with no work and no open stream, or at once, least recently
 * used first, when more than `maxResident` are kept. A session at work or followed is never
 * evicted; it becomes evictable when the last of those ends. Eviction is what a restart does to
 * a session, so the next message reloads it from the stores.
 */
export class SessionResidency {
  readonly #options: ResidencyOptions;
  readonly #now: () => number;
  /** In least recently used order: a use moves a session to the end. */
  readonly #resident = new Map<string, Resident>();
  readonly #evicting = new Set<Promise<void>>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: ResidencyOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    // An idle session leaves at most a quarter of `idleMs` late (and never later than 30 s).
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(10, Math.min(options.idleMs / 4, 30_000)));
    this.#sweeper.unref();
  }

  /** Sessions held in memory now, at work or not. */
  get size(): number {
    return this.#resident.size;
  }

  /** The session has work here (true) or none any more (false). */
  working(sessionId: string, busy: boolean): void {
    this.#use(sessionId).busy = busy;
    this.#enforceCap();
  }

  /** A stream of the session opened here. */
  followed(sessionId: string): void {
    this.#use(sessionId).streams += 1;
  }

  /** A stream of the session closed here. */
  unfollowed(sessionId: string): void {
    const resident = this.#resident.get(sessionId);
    if (!resident || resident.streams === 0) return;
    this.#use(sessionId).streams -= 1;
    this.#enforceCap();
  }

  /** Stops sweeping and waits for evictions under way. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all(this.#evicting);
  }

  #use(sessionId: string): Resident {
    const resident = this.#resident.get(sessionId) ?? { busy: false, streams: 0, lastUsed: 0 };
    this.#resident.delete(sessionId);
    resident.lastUsed = this.#now();
    this.#resident.set(sessionId, resident);
    return resident;
  }

  #sweep(): void {
    const cutoff = this.#now() - this.#options.idleMs;
    for (const [sessionId, resident] of this.#resident) {
      if (resident.lastUsed > cutoff) break; // the rest were used later still
      if (idle(resident)) this.#evict(sessionId, 'idle');
    }
  }

  #enforceCap(): void {
    let excess = this.#resident.size - this.#options.maxResident;
    for (const [sessionId, resident] of this.#resident) {
      if (excess <= 0) return;
      if (!idle(resident)) continue;
      this.#evict(sessionId, 'capacity');
      excess -= 1;
    }
  }

  #evict(sessionId: string, reason: EvictionReason): void {
    this.#resident.delete(sessionId);
    const evicting = this.#options
      .evict(sessionId)
      .then(() => this.#options.onEvicted?.(reason))
      .catch((error: unknown) => this.#options.onError(error, sessionId))
      .finally(() => this.#evicting.delete(evicting));
    this.#evicting.add(evicting);
  }
}

function idle(resident: Resident): boolean {
  return !resident.busy && resident.streams === 0;
}
