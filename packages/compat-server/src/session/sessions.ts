import type { CommandKind, CommandOf, CommandResult } from '@eve-flue/session-contract';

/** What the routes ask of sessions: one process's SessionManager, or a cluster of them. */
export interface Sessions {
  /** The one entry point of every session command. */
  execute<K extends CommandKind>(command: CommandOf<K>): Promise<CommandResult<K>>;
  streamAccess(sessionId: string): Promise<'ok' | 'not_found' | 'expired'>;
  recoverInterruptedTurns(): Promise<number>;
  sweepExpired(): Promise<number>;
  close(): Promise<void>;
}
