import type { Journal, TailListener } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import { callbackBody, TurnSummary, type JournaledEvent } from './callback-bodies.ts';
import type { CallbackStore, CallerBinding, OwedCallbacks } from './callback-store.ts';

export interface RemoteCallbacksOptions {
  store: CallbackStore;
  journal: Journal;
  logger: Logger;
  /** First retry delay after a failed delivery; doubles up to `maxRetryMs`. Default 500 ms. */
  retryMs?: number;
  /** Default 30 s. */
  maxRetryMs?: number;
  /** One delivery attempt's time limit. Default 30 s, as Eve's receiver. */
  attemptTimeoutMs?: number;
  /** With a shared ledger: how often to renew this instance's claims and look for deliveries nobody holds. Default 2 s. */
  sweepMs?: number;
}

const PAGE = 256;

/**
 * Delivers the callbacks that sessions owe their remote-agent parents. What is owed is derived
 * from the journal (the events are the durable fact) and the ledger in `CallbackStore` (who to
 * tell, and how far delivery got): after a restart, or on the instance that took a session over,
 * `start()` goes on from the ledger. Each event's callback is posted until the parent answers
 * 2xx or 404, retried with backoff otherwise, and the ledger advances past it right after that
 * answer, so a callback the parent acknowledged is not sent again.
 */
export class RemoteCallbacks {
  readonly #store: CallbackStore;
  readonly #journal: Journal;
  readonly #logger: Logger;
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  readonly #attemptTimeoutMs: number;
  /** Sessions being delivered now, and whether more arrived meanwhile. */
  readonly #running = new Map<string, { again: boolean }>();
  readonly #watching = new Map<string, TailListener>();
  /** How far this process has read each watched session: the next index, and the turn it is in. */
  readonly #progress = new Map<string, { next: number; turnFrom: number; turn: TurnSummary; ended: boolean }>();
  readonly #closed = new AbortController();
  readonly #pumps = new Set<Promise<void>>();
  readonly #sweep: NodeJS.Timeout | undefined;

  constructor(options: RemoteCallbacksOptions) {
    this.#store = options.store;
    this.#journal = options.journal;
    this.#logger = options.logger;
    this.#retryMs = options.retryMs ?? 500;
    this.#maxRetryMs = options.maxRetryMs ?? 30_000;
    this.#attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
    if (this.#store.shared) {
      this.#sweep = setInterval(() => void this.#resweep(), options.sweepMs ?? 2_000);
      this.#sweep.unref();
    }
  }

  /**
   * A shared ledger: keeps this instance's claims alive (one it lost stops its delivery) and
   * takes up what another instance owed when it died.
   */
  async #resweep(): Promise<void> {
    try {
      for (const sessionId of this.#watching.keys()) if (!(await this.#claim(sessionId))) this.#unwatch(sessionId);
      for (const owed of await this.#store.list()) if (!this.#watching.has(owed.sessionId)) this.#watch(owed.sessionId);
    } catch (error) {
      if (!this.#closed.signal.aborted) this.#logger.warn({ err: error }, 'remote-agent callbacks: the shared ledger could not be read');
    }
  }

  #claim(sessionId: string): Promise<boolean> {
    return this.#store.claim ? this.#store.claim(sessionId) : Promise.resolve(true);
  }

  /** Resumes every delivery the ledger says is owed (at startup). */
  async start(): Promise<void> {
    for (const owed of await this.#store.list()) this.#watch(owed.sessionId);
  }

  /** Records, durably, that the session owes `binding`'s parent callbacks, and starts delivering. */
  async bind(sessionId: string, binding: CallerBinding): Promise<void> {
    await this.#store.bind(sessionId, binding);
    this.#watch(sessionId);
  }

  /** Resolves once every delivery under way has stopped; nothing is dropped from the ledger. */
  async close(): Promise<void> {
    this.#closed.abort();
    clearInterval(this.#sweep);
    for (const [sessionId, listener] of this.#watching) this.#journal.unsubscribe(sessionId, listener);
    this.#watching.clear();
    await Promise.allSettled([...this.#pumps]);
    await this.#store.close();
  }

  #watch(sessionId: string): void {
    if (this.#closed.signal.aborted) return;
    if (!this.#watching.has(sessionId)) {
      const listener: TailListener = { appended: () => this.#schedule(sessionId), lost: () => this.#schedule(sessionId) };
      this.#watching.set(sessionId, listener);
      this.#journal.subscribe(sessionId, listener);
    }
    this.#schedule(sessionId);
  }

  #unwatch(sessionId: string): void {
    const listener = this.#watching.get(sessionId);
    if (listener) this.#journal.unsubscribe(sessionId, listener);
    this.#watching.delete(sessionId);
    this.#progress.delete(sessionId);
  }

  #schedule(sessionId: string): void {
    const running = this.#running.get(sessionId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.#running.set(sessionId, state);
    const pump = (async () => {
      try {
        do {
          state.again = false;
          await this.#deliverOwed(sessionId);
        } while (state.again && !this.#closed.signal.aborted);
      } catch (error) {
        if (!this.#closed.signal.aborted) this.#logger.error({ err: error, sessionId }, 'remote-agent callbacks stopped');
      } finally {
        this.#running.delete(sessionId);
      }
    })();
    this.#pumps.add(pump);
    void pump.finally(() => this.#pumps.delete(pump));
  }

  /**
   * Reads the session's journal on from where this process got to (after a start, from the turn
   * of the next undelivered event) and delivers what each event owes.
   */
  async #deliverOwed(sessionId: string): Promise<void> {
    let owed = await this.#store.get(sessionId);
    // Another instance delivers it (or nothing is owed): this one stops watching.
    if (!owed || !(await this.#claim(sessionId))) return this.#unwatch(sessionId);
    const progress = this.#progress.get(sessionId) ?? { next: owed.turnFrom, turnFrom: owed.turnFrom, turn: new TurnSummary(), ended: false };
    this.#progress.set(sessionId, progress);
    while (!this.#closed.signal.aborted) {
      const lines = await this.#journal.read(sessionId, progress.next, PAGE);
      for (const line of lines) {
        const event = JSON.parse(line.line) as JournaledEvent;
        if (event.type === 'turn.started') {
          progress.turn = new TurnSummary();
          progress.turnFrom = line.index;
        }
        progress.turn.add(event);
        if (event.type === 'session.completed') progress.ended = true;
        if (line.index > owed.deliveredThrough) {
          const binding = bindingFor(owed, event);
          const body = binding && callbackBody(event, { caller: binding.caller, structured: binding.structured === true, sessionId, turn: progress.turn });
          if (body && binding) {
            // Not delivered (closing): this event is read again, from its turn, by the next process.
            if (!(await this.#post(binding.caller.callback.url, body, sessionId))) return;
            await this.#store.advance(sessionId, line.index, progress.turnFrom);
            owed = { ...owed, deliveredThrough: line.index, turnFrom: progress.turnFrom };
            this.#logger.info({ sessionId, kind: body.kind, streamIndex: line.index }, 'remote-agent callback delivered');
          }
        }
        progress.next = line.index + 1;
      }
      if (lines.length < PAGE) break;
    }
    // A reset session writes nothing more: once everything it owed went out, its ledger entry goes too.
    if (progress.ended && !this.#closed.signal.aborted) {
      await this.#store.drop(sessionId);
      this.#unwatch(sessionId);
    }
  }

  /** Posts until the parent answers 2xx or 404 (true), or the dispatcher closes (false). */
  async #post(url: string, body: Record<string, unknown>, sessionId: string): Promise<boolean> {
    // Also stops once this instance no longer watches the session (a shared ledger's claim was lost).
    for (let attempt = 0, delay = this.#retryMs; !this.#closed.signal.aborted && this.#watching.has(sessionId); attempt++, delay = Math.min(delay * 2, this.#maxRetryMs)) {
      let failure: string;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          redirect: 'error',
          signal: AbortSignal.any([AbortSignal.timeout(this.#attemptTimeoutMs), this.#closed.signal]),
        });
        await response.body?.cancel();
        if (response.ok || response.status === 404) {
          if (response.status === 404) this.#logger.warn({ sessionId, kind: body.kind }, 'the remote-agent parent no longer waits for this callback (404)');
          return true;
        }
        failure = `HTTP ${response.status}`;
      } catch (error) {
        if (this.#closed.signal.aborted) return false;
        failure = error instanceof Error ? error.name : 'transport';
      }
      // The URL carries the parent's callback token: only its origin is logged.
      this.#logger.warn({ sessionId, kind: body.kind, callbackOrigin: new URL(url).origin, failure, attempt, retryInMs: delay }, 'remote-agent callback failed; retrying');
      await sleep(delay, this.#closed.signal);
    }
    return false;
  }
}

/** The binding an event belongs to: the latest one whose message is among the event's deliveries, else the first turn's. */
function bindingFor(owed: OwedCallbacks, event: JournaledEvent): CallerBinding | undefined {
  const deliveries = event.meta?.deliveryIds ?? [];
  for (let i = owed.bindings.length - 1; i >= 0; i--) {
    const binding = owed.bindings[i]!;
    if (binding.deliveryId !== undefined && deliveries.includes(binding.deliveryId)) return binding;
  }
  return event.data.turnId === 'turn_0' ? owed.bindings.find((b) => b.deliveryId === undefined) : undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
