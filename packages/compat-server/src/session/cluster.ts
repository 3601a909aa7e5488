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
  /** Sends a command to the owner and waits for its answer; rejects with OwnerUnreachableError. */
  forward(owner: string, command: SessionCommand): Promise<unknown>;
  /** Answers the commands other instances forward here. */
  serve(handler: (command: SessionCommand) => Promise<unknown>): void;
  close(): Promise<void>;
}

/** A command as it travels between instances: plain JSON. */
export type SessionCommand =
  | { kind: 'send'; sessionId: string; principal?: { id: string; type: 'user' | 'service' }; input: WireMessage; policy: 'steer' | 'queue'; deliveryId: string }
  | { kind: 'respond'; sessionId: string; responses: { requestId: string; optionId?: string; text?: string }[] }
  | { kind: 'cancel'; sessionId: string; turnId?: string }
  | { kind: 'clear' | 'compact' | 'reset'; sessionId: string };

/** A message with its file bytes as base64, so it can cross to another instance. */
export interface WireMessage {
  text: string;
  parts: unknown[];
  files: { mediaType: string; filename?: string; base64?: string; url?: string }[];
  clientContext?: unknown;
}

/** The owner did not answer in time: it may have died; its lease will tell. */
export class OwnerUnreachableError extends Error {
  override name = 'OwnerUnreachableError';
}

/** A refusal the owner answered with, carried back to the instance that forwarded the command. */
export interface ForwardedRefusal {
  status: number;
  code: string;
  message: string;
}
