import type { InputResponse } from '@eve-flue/eve-protocol';
import type { Principal } from '../auth/route-auth.ts';
import type { MessageInput, TurnPolicy } from './manager.ts';

/** What the routes ask of sessions: one process's SessionManager, or a cluster of them. */
export interface Sessions {
  create(principal: Principal | undefined, input: MessageInput | undefined, operationId?: string): Promise<string>;
  send(sessionId: string, principal: Principal | undefined, input: MessageInput, policy: TurnPolicy): Promise<string>;
  respond(sessionId: string, responses: readonly InputResponse[]): Promise<string>;
  cancel(sessionId: string, turnId?: string): Promise<'accepted' | 'no_active_turn'>;
  clear(sessionId: string): Promise<'accepted' | 'no_active_session'>;
  compact(sessionId: string): Promise<'accepted' | 'no_active_session'>;
  reset(sessionId: string): Promise<'reset' | 'no_active_session'>;
  streamAccess(sessionId: string): Promise<'ok' | 'not_found' | 'expired'>;
  recoverInterruptedTurns(): Promise<number>;
  sweepExpired(): Promise<number>;
  close(): Promise<void>;
}
