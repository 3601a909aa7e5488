import type { Principal } from '@eve-flue/session-contract';
import type { Journal } from '../journal/journal.ts';
import { RequestError } from '../session/errors.ts';

/**
 * Who may use a session besides its creator. `principal`: only the principal that created it
 * reads, follows, writes to and controls it; anyone else is told it does not exist. Absent:
 * anyone route auth admits (Eve's behaviour).
 */
export type SessionOwnerPolicy = 'principal';

export interface SessionOwnership {
  /** Throws `session_not_found` unless `caller` may use `sessionId` (a session that does not exist passes: its route says so). */
  check(sessionId: string, caller: Principal | undefined): Promise<void>;
}

export function sessionOwnership(journal: Pick<Journal, 'getSession'>, policy: SessionOwnerPolicy | undefined): SessionOwnership | undefined {
  if (policy === undefined) return undefined;
  return {
    async check(sessionId, caller) {
      const record = await journal.getSession(sessionId);
      // The same answer as a session that does not exist, so an id reveals nothing to a stranger.
      if (record && record.principalId !== caller?.id) throw new RequestError('session_not_found', 'Session not found.');
    },
  };
}
