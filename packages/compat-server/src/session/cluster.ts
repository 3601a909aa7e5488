import type { ErrorCode } from '@eve-flue/eve-protocol';
import type { SessionBoundCommand } from '@eve-flue/session-contract';

/**
 * How several bridge instances that share one journal agree on who runs each session: one
 * owner at a time, held by a lease the owner renews; commands that land elsewhere are forwarded
 * to the owner and answered from there.
 */
export interface SessionCluster {
  /** This instance's id. */
  readonly instanceId: string;
  /** Takes the session if nobody holds it; returns who holds it now, and whether we just took it. */
  claim(sessionId: string): Promise<{ owner: string; fresh: boolean }>;
  /** Gives a session up (it ended, or this instance stops). */
  release(sessionId: string): Promise<void>;
  /** Whether this instance holds the session's lease, as far as it knows (no round trip). */
  holds(sessionId: string): boolean;
  /** Whether anyone holds the session's lease. */
  isHeld(sessionId: string): Promise<boolean>;
  /**
   * Sends a command to the owner and resolves with its answer, still to be checked against the
   * command's result schema; rejects with OwnerUnreachableError, or the RequestError it refused with.
   */
  forward(owner: string, command: SessionBoundCommand): Promise<unknown>;
  /** Answers the commands other instances forward here, each checked against its schema on arrival. */
  serve(handler: (command: SessionBoundCommand) => Promise<unknown>): void;
  close(): Promise<void>;
}

/** The owner did not answer in time: it may have died; its lease will tell. */
export class OwnerUnreachableError extends Error {
  override name = 'OwnerUnreachableError';
}

/** A refusal the owner answered with, carried back to the instance that forwarded the command. */
export interface ForwardedRefusal {
  code: ErrorCode;
  message: string;
}
