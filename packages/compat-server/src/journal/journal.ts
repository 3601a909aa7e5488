import type { EveEvent, EveEventDraft } from '@eve-flue/eve-protocol';

/** What survives a restart about a session, besides its events. */
export type SessionRecord = SessionRecordCommon & ({ status: 'open' } | { status: 'ended'; endedAt: number });

interface SessionRecordCommon {
  id: string;
  createdAt: number;
  /** Who created it; absent for anonymous callers (development only). */
  principalId?: string;
  /** Set once retention dropped the events. */
  eventsDropped?: boolean;
  /** Turns started so far; the next turn is `turn_<turnCount>`. */
  turnCount: number;
  /** Set while a turn runs, so that a restart can end it as interrupted. */
  activeTurn?: ActiveTurnRecord;
}

export interface ActiveTurnRecord {
  turnId: string;
  sequence: number;
  deliveryIds: string[];
}

/** A journaled event as readers need it: its index, type, and the exact line to send. */
export interface JournalLine {
  index: number;
  type: string;
  /** The event serialized once at append time, newline included; replays are byte-identical. */
  line: string;
}

/** Who hears that a session's journal grew. */
export interface TailListener {
  /** After an append: the index of the session's last event now. */
  appended(tail: number): void;
  /** The store lost its notifications (its connection dropped): appends may go unheard. */
  lost?(): void;
}

export interface AppendOptions {
  deliveryIds?: readonly string[];
  /** Written in the same transaction as the events, so neither is ever half-written. */
  record?: SessionRecord;
}

/**
 * The durable, ordered event log of every session, and each session's record.
 * A store owns the absolute stream index: `append` assigns consecutive indexes atomically.
 */
export interface Journal {
  /**
   * Set when append notifications can be lost (pub/sub is at-most-once): followers then also
   * look for new events this often while they wait.
   */
  readonly pollIntervalMs?: number;
  /**
   * Stores a new session. With an `operationKey` already owned by an open session, stores
   * nothing and returns that session instead (create-once semantics).
   */
  createSession(record: SessionRecord, operationKey?: string): Promise<SessionRecord>;
  getSession(sessionId: string): Promise<SessionRecord | undefined>;
  /** Sessions with a turn marked active: the ones a crash interrupted. */
  listInterrupted(): Promise<SessionRecord[]>;
  /** Ended sessions whose `endedAt` is before `cutoff` and whose events are still kept. */
  listEndedBefore(cutoff: number): Promise<string[]>;
  /** Drops a session's events past retention; its record stays, so readers learn it expired. */
  dropEvents(sessionId: string): Promise<void>;

  append(sessionId: string, drafts: readonly EveEventDraft[], options?: AppendOptions): Promise<EveEvent[]>;
  /** Events `from` (inclusive) onwards, at most `limit` of them, in index order. */
  read(sessionId: string, from: number, limit: number): Promise<JournalLine[]>;
  /** Index of the last event, or -1 when there is none. */
  tail(sessionId: string): Promise<number>;
  /**
   * Tells `listener` the new tail after each append to the session, in any process sharing the
   * store, and when the store can no longer tell (its connection dropped), until `unsubscribe`.
   */
  subscribe(sessionId: string, listener: TailListener): void;
  /** Stops telling `listener` about the session (nothing if it was not subscribed). */
  unsubscribe(sessionId: string, listener: TailListener): void;
  /** The session left this process's memory (idle): drop what is cached of it, nothing stored. */
  evict?(sessionId: string): void;

  close(): Promise<void>;
}

export function serializeEvent(event: EveEvent): JournalLine {
  return { index: event.streamIndex, type: event.type, line: `${JSON.stringify(event)}\n` };
}
