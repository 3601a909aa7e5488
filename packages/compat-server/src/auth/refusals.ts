import type { AuthChallenge } from './route-auth.ts';

interface RefusalOptions {
  /** Shown to the caller: never put a credential in it. */
  message?: string;
  /** The schemes to advertise instead of the strategies' own. */
  challenges?: readonly AuthChallenge[];
}

/** Thrown by a strategy: refuse the request with 401 now, without trying the next strategy. */
export class UnauthenticatedError extends Error {
  override name = 'UnauthenticatedError';
  readonly challenges: readonly AuthChallenge[] | undefined;
  constructor(options: RefusalOptions = {}) {
    super(options.message ?? 'Authorization is required for this route.');
    this.challenges = options.challenges;
  }
}

/** Thrown by a strategy: the caller is known but not allowed; 403. */
export class ForbiddenError extends Error {
  override name = 'ForbiddenError';
  constructor(options: Pick<RefusalOptions, 'message'> = {}) {
    super(options.message ?? 'Forbidden.');
  }
}
