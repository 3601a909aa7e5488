import type { FlueObservation } from '@flue/runtime';
import type { TurnContext } from '@eve-flue/session-contract';
import type { LiveDelta } from './live-tap.ts';
import type { TurnTranslator } from './turn-translator.ts';

export interface Settlement {
  outcome: 'completed' | 'failed' | 'aborted';
  message?: string;
  /** Flue's error type, e.g. `tool_name_conflict`. */
  type?: string;
}

/** Events kept for submissions not yet known to be this turn's; bounded so a stranger cannot grow it. */
const MAX_UNCLAIMED = 10_000;

/**
 * The Flue side of one Eve turn: the submissions it dispatched, their events, their settlement.
 * Flue may report a submission's first events before `dispatch()` returns its id, so events of
 * unknown submissions wait here until claimed; those of a submission this turn never claims
 * (one still winding down from an earlier, cancelled turn) never reach the translator.
 */
export class TurnRun {
  readonly turn: TurnContext;
  readonly translator: TurnTranslator;
  readonly #claimed = new Set<string>();
  readonly #settled = new Map<string, Settlement>();
  readonly #waiters = new Map<string, (settlement: Settlement) => void>();
  #unclaimed: FlueObservation[] = [];
  /** Model turns a live delta arrived for before their submission was claimed: Flue's report serves them. */
  readonly #missedLive = new Set<string>();
  /** Connections signed in to from their stand-in tool since the last submission was dispatched. */
  #signedIn: string[] = [];

  constructor(turn: TurnContext, translator: TurnTranslator) {
    this.turn = turn;
    this.translator = translator;
  }

  /** Takes a dispatched submission as this turn's: replays what it already reported. */
  claim(submissionId: string): Promise<Settlement> {
    this.#claimed.add(submissionId);
    const mine = this.#unclaimed.filter((o) => submissionOf(o) === submissionId);
    this.#unclaimed = this.#unclaimed.filter((o) => submissionOf(o) !== submissionId);
    for (const observation of mine) this.observe(observation);
    const known = this.#settled.get(submissionId);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => this.#waiters.set(submissionId, resolve));
  }

  /** A stand-in tool's sign-in ended authorized: the turn goes on once its submissions settle. */
  signedIn(connection: string): void {
    if (!this.#signedIn.includes(connection)) this.#signedIn.push(connection);
  }

  takeSignedIn(): string[] {
    const taken = this.#signedIn;
    this.#signedIn = [];
    return taken;
  }

  /** A live delta of a model turn; one that arrives before its submission is claimed is left to Flue's report. */
  live(submissionId: string, flueTurnId: string, delta: LiveDelta): void {
    if (!this.#claimed.has(submissionId) || this.#missedLive.has(flueTurnId)) {
      this.#missedLive.add(flueTurnId);
      return;
    }
    this.translator.live(flueTurnId, delta);
  }

  observe(observation: FlueObservation): void {
    const submissionId = submissionOf(observation);
    if (submissionId === undefined) return;
    if (!this.#claimed.has(submissionId)) {
      if (this.#unclaimed.length < MAX_UNCLAIMED) this.#unclaimed.push(observation);
      return;
    }
    if (observation.type === 'submission_settled') {
      const { error } = observation;
      const settlement: Settlement = { outcome: observation.outcome, ...(error ? { message: error.message, ...(error.type ? { type: error.type } : {}) } : {}) };
      this.#settled.set(submissionId, settlement);
      this.#waiters.get(submissionId)?.(settlement);
      return;
    }
    this.translator.handle(observation);
  }
}

function submissionOf(observation: FlueObservation): string | undefined {
  return (observation as { submissionId?: string }).submissionId;
}
