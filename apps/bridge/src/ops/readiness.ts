import type { RequestHandler } from 'express';
import { RequestError, sendRefusal } from '@eve-flue/compat-server';

/** Checks one store; rejects when it cannot be reached. */
export type StoreProbe = () => Promise<void>;

/** The path a load balancer polls. Eve's `/eve/v1/health` keeps its fixed shape and always answers. */
export const READY_PATH = '/ready';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Whether this instance should get traffic: not while it starts or drains (SIGTERM), nor while a
 * store it needs cannot be reached. While draining it also refuses new turns, so a client's next message
 * goes to another instance.
 */
export class Readiness {
  readonly #probes: readonly StoreProbe[];
  #state: 'starting' | 'ready' | 'draining' = 'starting';

  constructor(probes: readonly StoreProbe[]) {
    this.#probes = probes;
  }

  /** Everything is built: the instance may take traffic (unless it already drains). */
  markReady(): void {
    if (this.#state === 'starting') this.#state = 'ready';
  }

  startDraining(): void {
    this.#state = 'draining';
  }

  /** `GET /ready`: 200 `{ok:true,status:'ready'}`, else 503 with the reason. */
  route(): RequestHandler {
    return async (request, response, next) => {
      if (request.path !== READY_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) return next();
      response.set('cache-control', 'no-store');
      if (this.#state !== 'ready') {
        const reason = this.#state === 'starting' ? 'This instance is starting.' : 'This instance is shutting down.';
        return void sendRefusal(response, 'service_unavailable', reason);
      }
      try {
        await Promise.all(this.#probes.map((probe) => withTimeout(probe(), PROBE_TIMEOUT_MS)));
      } catch {
        return void sendRefusal(response, 'service_unavailable', 'A store this instance needs cannot be reached.');
      }
      response.json({ ok: true, status: 'ready' });
    };
  }

  /** Why no new turn may start now (while draining); the same refusal on every channel that starts turns. */
  newTurnRefusal(): RequestError | undefined {
    return this.#state === 'draining' ? new RequestError('service_unavailable', 'This instance is shutting down; send again.') : undefined;
  }

  /** While draining: a message that would start or queue a turn is refused with 503 (retry elsewhere). */
  refuseNewTurns(): RequestHandler {
    return (request, response, next) => {
      const refusal = this.newTurnRefusal();
      if (!refusal || request.method !== 'POST' || !STARTS_TURN.test(request.path)) return next();
      sendRefusal(response, refusal.code, refusal.message, { headers: { 'retry-after': '1' } });
    };
  }
}

/** `POST /eve/v1/session` and `POST /eve/v1/session/:sessionId`. */
const STARTS_TURN = /^\/eve\/v1\/session(\/[^/]+)?\/?$/;

async function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('probe timed out')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
