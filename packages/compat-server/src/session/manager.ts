import { randomUUID } from 'node:crypto';
import type { EveEventDraft } from '@eve-flue/eve-protocol';
import {
  dispatch,
  TurnError,
  type AgentRuntime,
  type CommandHandlers,
  type CommandKind,
  type CommandOf,
  type CommandResult,
  type Principal,
  type UserMessage,
} from '@eve-flue/session-contract';
import { StoreUnavailableError } from '../journal/errors.ts';
import type { Journal, SessionRecord } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import type { TurnOutcome } from '../observer.ts';
import { RequestError, sessionNotActive } from './errors.ts';
import { newDeliveryId, newSessionId, turnIdFor } from './ids.ts';
import { SessionLog } from './session-log.ts';
import type { Sessions } from './sessions.ts';
import { outputInstruction, structuredOutput } from './structured-output.ts';
import { messageReceived, Turn } from './turn.ts';

type Work = { kind: 'message'; message: UserMessage } | { kind: 'clear' } | { kind: 'compact' };

/** A session this process is serving: its record, writer, running turn and backlog. */
interface LiveSession {
  record: SessionRecord;
  log: SessionLog;
  turn?: Turn;
  backlog: Work[];
  /** Resolves when the worker loop has drained the backlog. */
  worker?: Promise<void>;
  ending?: Promise<void>;
}

export interface SessionManagerOptions {
  journal: Journal;
  runtime: AgentRuntime;
  logger: Logger;
  /** How long an ended session's stream stays readable. */
  retentionMs: number;
  now?: () => number;
  /** Hears how each turn ended (metrics). */
  onTurnEnded?: (outcome: TurnOutcome) => void;
  /** Hears each session start (true) and stop (false) having work here: what keeps it resident. */
  onWorking?: (sessionId: string, working: boolean) => void;
  /**
   * Who an anonymous caller's `operationId` belongs to: Eve's synthetic `local-dev` principal in
   * development (where route auth may be off). Absent, an anonymous `operationId` is refused.
   */
  anonymousOperations?: Principal;
}

const SESSION_WAITING: EveEventDraft = { type: 'session.waiting', data: { continuationToken: '', wait: 'next-user-message' } };

/**
 * Owns the life of every session: turns, deliveries, steering and queueing, input requests,
 * and the controls. One worker loop per session runs its backlog strictly in order.
 */
export class SessionManager implements Sessions {
  readonly #journal: Journal;
  readonly #runtime: AgentRuntime;
  readonly #logger: Logger;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #live = new Map<string, LiveSession>();
  readonly #idleListeners: ((sessionId: string) => void)[] = [];
  readonly #onTurnEnded: (outcome: TurnOutcome) => void;
  readonly #onWorking: (sessionId: string, working: boolean) => void;
  readonly #anonymousOperations: Principal | undefined;
  readonly #idleWaiters = new Set<() => void>();
  #closing = false;

  constructor(options: SessionManagerOptions) {
    this.#journal = options.journal;
    this.#runtime = options.runtime;
    this.#logger = options.logger;
    this.#retentionMs = options.retentionMs;
    this.#now = options.now ?? Date.now;
    this.#onTurnEnded = options.onTurnEnded ?? (() => undefined);
    this.#onWorking = options.onWorking ?? (() => undefined);
    this.#anonymousOperations = options.anonymousOperations;
  }

  /** Sessions at work here now: a turn running, or work queued behind it. */
  get working(): number {
    return this.#live.size;
  }

  /** Resolves true once no session is at work here, or false when `timeoutMs` passes first. */
  async quiesce(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#live.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      const { promise, resolve } = Promise.withResolvers<void>();
      const timer = setTimeout(resolve, left);
      this.#idleWaiters.add(resolve);
      await promise;
      clearTimeout(timer);
      this.#idleWaiters.delete(resolve);
    }
    return true;
  }

  /** Ends every turn a previous process left running, so each session accepts its next message. */
  async recoverInterruptedTurns(): Promise<number> {
    const interrupted = await this.#journal.listInterrupted();
    for (const record of interrupted) await this.#endInterruptedTurn(record);
    return interrupted.length;
  }

  /**
   * Ends a session's turn if its record says one runs but none runs here (its process died).
   * For a cluster, once this instance has taken the session over.
   */
  async recoverSession(sessionId: string): Promise<boolean> {
    if (this.#live.get(sessionId)?.turn) return false;
    this.#dropLive(sessionId);
    const record = await this.#journal.getSession(sessionId);
    if (!record?.activeTurn) return false;
    await this.#endInterruptedTurn(record);
    return true;
  }

  /** Calls `listener` each time a session has no more work here and leaves memory. */
  whenIdle(listener: (sessionId: string) => void): void {
    this.#idleListeners.push(listener);
  }

  /** Drops what this instance remembers of a session (another instance may have changed it since). */
  forget(sessionId: string): void {
    const live = this.#live.get(sessionId);
    if (live && !live.turn && !live.worker) this.#dropLive(sessionId);
  }

  async #endInterruptedTurn(record: SessionRecord): Promise<void> {
    const active = record.activeTurn!;
    const { activeTurn: _, ...settled } = record;
    await this.#journal.append(
      record.id,
      [
        {
          type: 'turn.failed',
          data: {
            sequence: active.sequence,
            turnId: active.turnId,
            code: 'interrupted',
            message: 'The bridge stopped while this turn was running. Send the message again to retry.',
            terminal: false,
          },
        },
        SESSION_WAITING,
      ],
      { deliveryIds: active.deliveryIds, record: settled },
    );
    this.#onTurnEnded('interrupted');
    await this.#runtime.abandonTurn?.(record.id);
    this.#logger.warn({ sessionId: record.id, turnId: active.turnId }, 'ended a turn interrupted when its bridge stopped');
  }

  /** Drops the events of sessions ended longer ago than the retention period. */
  async sweepExpired(): Promise<number> {
    const expired = await this.#journal.listEndedBefore(this.#now() - this.#retentionMs);
    for (const id of expired) await this.#journal.dropEvents(id);
    return expired.length;
  }

  /** Runs a session command here. */
  execute<K extends CommandKind>(command: CommandOf<K>): Promise<CommandResult<K>> {
    return dispatch(this.#handlers, command);
  }

  readonly #handlers: CommandHandlers = {
    create: (command) => this.#create(command),
    send: (command) => this.#send(command),
    respond: (command) => this.#respond(command),
    cancel: (command) => this.#cancel(command),
    clear: (command) => this.#clear(command),
    compact: (command) => this.#compact(command),
    reset: (command) => this.#reset(command),
  };

  async #create({ principal, input, operationId, deliveryId }: CommandOf<'create'>): Promise<string> {
    let operationKey: string | undefined;
    if (operationId !== undefined) {
      const owner = principal ?? this.#anonymousOperations;
      if (!owner) throw new RequestError('operation_id_requires_auth', 'operationId needs an authenticated caller.');
      operationKey = `${owner.id}\u0000${operationId}`;
    }
    const candidate: SessionRecord = {
      id: newSessionId(),
      createdAt: this.#now(),
      status: 'open',
      turnCount: 0,
      ...(principal ? { principalId: principal.id } : {}),
    };
    const record = await this.#journal.createSession(candidate, operationKey);
    if (record.id !== candidate.id) return record.id;
    if (input) {
      const session: LiveSession = { record, log: new SessionLog(this.#journal, record.id), backlog: [] };
      this.#setLive(session);
      this.#enqueue(session, { kind: 'message', message: { ...input, deliveryId: deliveryId ?? newDeliveryId(), principal } });
    }
    return record.id;
  }

  async #send({ sessionId, principal, input, policy, deliveryId }: CommandOf<'send'>): Promise<string> {
    const session = await this.#open(sessionId);
    const message: UserMessage = { ...input, deliveryId, principal };
    const turn = session.turn;
    const sameCaller = turn !== undefined && turn.principal?.id === principal?.id;
    // The person a parked turn waits on steers it whatever the policy: the turn cannot end until they act.
    if (turn && sameCaller && (policy === 'steer' || turn.parkedOnInput) && turn.acceptsSteering) {
      await turn.steer(message);
    } else {
      this.#enqueue(session, { kind: 'message', message });
    }
    return message.deliveryId;
  }

  async #respond({ sessionId, responses }: CommandOf<'respond'>): Promise<string> {
    const session = await this.#open(sessionId);
    const turn = session.turn;
    if (!turn || turn.answers(responses).length === 0) {
      throw new RequestError('unknown_input_request', 'No open input request of this session matches those requestIds.');
    }
    const deliveryId = newDeliveryId();
    await turn.answer(responses, deliveryId);
    return deliveryId;
  }

  async #cancel({ sessionId, turnId }: CommandOf<'cancel'>): Promise<CommandResult<'cancel'>> {
    const session = await this.#find(sessionId);
    if (!session || session.record.status !== 'open') return 'no_active_turn';
    const turn = session.turn;
    if (turn && (turnId === undefined || turnId === turn.turnId)) turn.abort('cancelled');
    return 'accepted';
  }

  async #clear({ sessionId }: CommandOf<'clear'>): Promise<CommandResult<'clear'>> {
    const session = await this.#find(sessionId);
    if (!session || session.record.status !== 'open') return 'no_active_session';
    // A turn parked on a person is withdrawn by a clear; a running one finishes first.
    if (session.turn?.parkedOnInput) session.turn.abort('cleared');
    this.#enqueue(session, { kind: 'clear' });
    return 'accepted';
  }

  async #compact({ sessionId }: CommandOf<'compact'>): Promise<CommandResult<'compact'>> {
    const session = await this.#find(sessionId);
    if (!session || session.record.status !== 'open') return 'no_active_session';
    this.#enqueue(session, { kind: 'compact' });
    return 'accepted';
  }

  async #reset({ sessionId }: CommandOf<'reset'>): Promise<CommandResult<'reset'>> {
    const session = await this.#find(sessionId);
    if (!session || session.record.status !== 'open') return 'no_active_session';
    const live = this.#hold(session);
    // A reset that could not be journaled leaves the session open, to be reset again.
    live.ending ??= this.#end(live).catch((error: unknown) => {
      live.ending = undefined;
      throw error;
    });
    await live.ending;
    return 'reset';
  }

  /** Whether a stream of this session can be read, and if not, why. */
  async streamAccess(sessionId: string): Promise<'ok' | 'not_found' | 'expired'> {
    const record = this.#live.get(sessionId)?.record ?? (await this.#journal.getSession(sessionId));
    if (!record) return 'not_found';
    if (record.status === 'ended' && (record.eventsDropped || this.#now() - (record.endedAt ?? 0) > this.#retentionMs)) return 'expired';
    return 'ok';
  }

  /** Stops accepting work, cancels running turns and waits for them to settle. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const session of this.#live.values()) {
      session.backlog.length = 0;
      session.turn?.abort('shutdown');
    }
    await Promise.all([...this.#live.values()].map((s) => s.worker));
  }

  async #find(sessionId: string): Promise<LiveSession | undefined> {
    const live = this.#live.get(sessionId);
    if (live) return live;
    let record = await this.#journal.getSession(sessionId);
    if (!record) return undefined;
    const loadedMeanwhile = this.#live.get(sessionId);
    if (loadedMeanwhile) return loadedMeanwhile;
    // Nothing runs this session here, yet its record names a running turn: that turn died
    // (its process stopped, or its end could not be written). End it before going on.
    if (record.activeTurn) {
      await this.#endInterruptedTurn(record);
      record = (await this.#journal.getSession(sessionId))!;
    }
    return this.#live.get(sessionId) ?? { record, log: new SessionLog(this.#journal, sessionId), backlog: [] };
  }

  async #open(sessionId: string): Promise<LiveSession> {
    const session = await this.#find(sessionId);
    if (!session || session.record.status !== 'open' || session.ending || this.#closing) throw sessionNotActive();
    return session;
  }

  /**
   * The one LiveSession of a session id: two requests that loaded the same idle session at
   * once must share one worker, one writer and one turn.
   */
  #hold(session: LiveSession): LiveSession {
    const live = this.#live.get(session.record.id);
    if (live) return live;
    this.#setLive(session);
    return session;
  }

  #setLive(session: LiveSession): void {
    this.#live.set(session.record.id, session);
    this.#onWorking(session.record.id, true);
  }

  #dropLive(sessionId: string): void {
    if (this.#live.delete(sessionId)) this.#onWorking(sessionId, false);
  }

  #enqueue(found: LiveSession, work: Work): void {
    const session = this.#hold(found);
    session.backlog.push(work);
    session.worker ??= this.#drain(session).finally(() => {
      session.worker = undefined;
      // An idle session lives in the journal only: memory holds just the sessions at work.
      if (!session.turn && session.backlog.length === 0 && this.#live.get(session.record.id) === session) {
        this.#dropLive(session.record.id);
        for (const listener of this.#idleListeners) listener(session.record.id);
        for (const waiter of this.#idleWaiters) waiter();
      }
    });
  }

  async #drain(session: LiveSession): Promise<void> {
    for (let work = session.backlog.shift(); work; work = session.backlog.shift()) {
      try {
        if (work.kind === 'message') await this.#runTurn(session, work.message);
        else if (work.kind === 'clear') await this.#clearContext(session);
        else await this.#compactContext(session);
      } catch (error) {
        this.#logger.error({ err: error, sessionId: session.record.id, work: work.kind }, 'session work failed');
      }
    }
  }

  async #runTurn(session: LiveSession, message: UserMessage): Promise<void> {
    const { record, log } = session;
    const turn = new Turn(log, record.turnCount, message);
    const opening: EveEventDraft[] = [
      ...(turn.sequence === 0 ? [{ type: 'session.started', data: {} } as const] : []),
      { type: 'turn.started', data: turn.coordinates },
      { type: 'message.received', data: messageReceived(turn.coordinates, message) },
    ];
    const started = { ...record, turnCount: record.turnCount + 1, activeTurn: { turnId: turn.turnId, sequence: turn.sequence, deliveryIds: [...turn.deliveryIds] } };
    // The turn exists only once its opening is journaled; a store that is briefly away gets a few tries.
    await withStoreRetries(() => log.write(opening, turn.deliveryIds, started));
    Object.assign(record, started);
    session.turn = turn;

    let ending: EveEventDraft;
    let failed = false;
    try {
      for (let input: UserMessage | undefined = message; input && !turn.signal.aborted; input = foldSteering(turn.takeSteering())) {
        // A cancelled turn ends now, even if the runtime is slow to notice.
        await Promise.race([this.#runtime.runTurn(turn, withOutputInstruction(input, message.outputSchema)), turn.aborted()]);
      }
      if (message.outputSchema && !turn.signal.aborted) await turn.emit('result.completed', { result: structuredOutput(message.outputSchema, turn.finalAnswer) });
      ending = this.#abortedEnding(turn) ?? { type: 'turn.completed', data: turn.coordinates };
    } catch (error) {
      // The failure's id is on the event and in the log line, to find one from the other.
      const errorId = randomUUID();
      ending = this.#abortedEnding(turn) ?? turnFailed(turn, error, errorId);
      failed = ending.type === 'turn.failed';
      if (failed) this.#logger.warn({ err: error, sessionId: record.id, turnId: turn.turnId, errorId }, 'turn failed');
    }
    this.#onTurnEnded(outcomeOf(ending));
    const unanswered = turn.stopSteering();
    try {
      await turn.withdrawOpenRequests();
      const settled: SessionRecord = { ...record };
      delete settled.activeTurn;
      if (turn.abortReason === 'reset') {
        await turn.close([ending]);
        return;
      }
      await turn.close([ending, SESSION_WAITING], settled);
    } finally {
      // Whatever could be journaled, this process is done with the turn. If its end could not be
      // written, the stored record still names it, and recovery ends it as interrupted.
      session.turn = undefined;
      delete record.activeTurn;
    }
    // Steering messages the failed turn never reached were accepted: they start the next turn.
    const retry = failed ? foldSteering(unanswered) : undefined;
    if (retry) session.backlog.unshift({ kind: 'message', message: retry });
  }

  #abortedEnding(turn: Turn): EveEventDraft | undefined {
    switch (turn.abortReason) {
      case undefined:
        return undefined;
      case 'shutdown':
        return {
          type: 'turn.failed',
          data: { ...turn.coordinates, code: 'interrupted', message: 'The bridge stopped while this turn was running.', terminal: false },
        };
      default:
        return { type: 'turn.cancelled', data: turn.coordinates };
    }
  }

  async #clearContext(session: LiveSession): Promise<void> {
    await this.#runtime.clearContext(session.record.id);
    const coordinates = lastTurnCoordinates(session.record);
    await session.log.write([{ type: 'context.cleared', data: { ...coordinates, sessionId: session.record.id } }, SESSION_WAITING]);
  }

  async #compactContext(session: LiveSession): Promise<void> {
    const { record, log } = session;
    const coordinates = { ...lastTurnCoordinates(record), stepIndex: 0, sessionId: record.id };
    const description = await this.#runtime.describe();
    await log.write([{ type: 'compaction.requested', data: { ...coordinates, modelId: description.modelId, usageInputTokens: null } }]);
    try {
      const result = await this.#runtime.compactContext(record.id);
      await log.write([{ type: 'compaction.completed', data: { ...coordinates, modelId: result.modelId } }, SESSION_WAITING]);
    } catch (error) {
      // Often expected (a runtime without compaction on demand): the reason, without a stack trace.
      this.#logger.warn({ sessionId: record.id, reason: error instanceof Error ? error.message : String(error) }, 'compaction failed; history unchanged');
      await log.write([SESSION_WAITING]);
    }
  }

  async #end(session: LiveSession): Promise<void> {
    session.backlog.length = 0;
    session.turn?.abort('reset');
    await session.worker;
    const { record, log } = session;
    const ended: SessionRecord = { ...record, status: 'ended', endedAt: this.#now() };
    await log.write([{ type: 'session.completed', data: undefined }], [], ended);
    Object.assign(record, ended);
    this.#dropLive(record.id);
    await this.#runtime.endSession?.(record.id);
  }
}

/** Tries a write again while the store is unavailable, for a few seconds at most. */
async function withStoreRetries<T>(write: () => Promise<T>): Promise<T> {
  for (let delay = 100; ; delay *= 2) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || delay > 3_200) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The message as the runtime receives it when a structured answer is wanted: told the schema it must match. */
function withOutputInstruction(input: UserMessage, schema: Record<string, unknown> | undefined): UserMessage {
  return schema ? { ...input, text: `${input.text}\n\n${outputInstruction(schema)}` } : input;
}

function foldSteering(messages: UserMessage[]): UserMessage | undefined {
  const [first, ...rest] = messages;
  if (!first) return undefined;
  return rest.reduce<UserMessage>(
    (folded, next) => ({
      ...folded,
      text: `${folded.text}\n\n${next.text}`,
      parts: [...folded.parts, ...next.parts],
      files: [...folded.files, ...next.files],
    }),
    first,
  );
}

function turnFailed(turn: Turn, error: unknown, errorId: string): EveEventDraft {
  const code = error instanceof TurnError ? error.code : 'turn_failed';
  const message = error instanceof Error ? error.message : 'The turn failed.';
  return { type: 'turn.failed', data: { ...turn.coordinates, code, message, details: { errorId }, terminal: false } };
}

function lastTurnCoordinates(record: SessionRecord) {
  const sequence = Math.max(record.turnCount - 1, 0);
  return { sequence, turnId: turnIdFor(sequence) };
}

function outcomeOf(ending: EveEventDraft): TurnOutcome {
  if (ending.type === 'turn.completed') return 'completed';
  if (ending.type === 'turn.cancelled') return 'cancelled';
  return (ending.data as { code?: string }).code === 'interrupted' ? 'interrupted' : 'failed';
}
