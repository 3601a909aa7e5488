import type { EveEvent, InputResponse } from '@eve-flue/eve-protocol';
import type { Principal } from '@eve-flue/session-contract';
import type { Journal, SessionRecord } from '../journal/journal.ts';
import { RequestError } from '../session/errors.ts';
import type { Sessions } from '../session/sessions.ts';
import { foldTurn, isTerminalStatus, POLL_AFTER_MS, projectInvocation, repeatsResolvedBatch, STATE_EVENT_TYPES, type InvocationState, type TurnView } from './invocation-state.ts';

/** A rejected `agent_*` call: Eve's codes for a call the caller must correct or retry. */
export class InvocationRejection extends Error {
  override name = 'InvocationRejection';
  readonly code: 'not_found' | 'conflict';
  constructor(code: 'not_found' | 'conflict', message: string) {
    super(message);
    this.code = code;
  }
}

export const INVOCATION_NOT_FOUND = 'Invocation not found. It may have expired or belong to another caller.';
const notFound = () => new InvocationRejection('not_found', INVOCATION_NOT_FOUND);
const conflict = (message: string) => new InvocationRejection('conflict', `${message} Call agent_get to read the current state before answering again.`);

/** `session.started`, `turn.started`: the first events of a new session's first turn. */
const TURN_OPENING = 2;
/** How long `agent_start` waits for its turn to be journaled (a store retrying a write takes seconds). */
const TURN_START_TIMEOUT_MS = 10_000;
/** Journal lines read per page while folding a session's state. */
const PAGE = 1_000;

/**
 * Eve's invocations on the bridge's sessions: each invocation is one session, started, answered
 * and cancelled with the session commands, and read back from its journal. Nothing else is stored.
 */
export class Invocations {
  readonly #sessions: Sessions;
  readonly #journal: Journal;

  constructor(sessions: Sessions, journal: Journal) {
    this.#sessions = sessions;
    this.#journal = journal;
  }

  /** Starts the work; answers once the session and its first message are accepted. */
  async start(principal: Principal | undefined, message: string): Promise<InvocationState> {
    const sessionId = await this.#sessions.execute({
      kind: 'create',
      ...(principal ? { principal } : {}),
      input: { text: message, parts: [{ type: 'text', text: message }], files: [] },
    });
    // Durable acceptance: the message is journaled with its turn (a cancel from here on reaches it).
    await this.#turnStarted(sessionId);
    const record = await this.#journal.getSession(sessionId);
    if (!record) throw new Error('The invocation session was not stored.');
    return { invocationId: sessionId, createdAt: createdAt(record), status: 'working', pollAfterMs: POLL_AFTER_MS };
  }

  async get(principal: Principal | undefined, invocationId: string): Promise<InvocationState> {
    const { state } = await this.#read(principal, invocationId);
    return state;
  }

  /** Answers the complete pending batch; the same answers again are the current state, different ones a conflict. */
  async update(principal: Principal | undefined, invocationId: string, responses: readonly InputResponse[]): Promise<InvocationState> {
    const { state, view } = await this.#read(principal, invocationId);
    if (state.status !== 'input_required') {
      if (repeatsResolvedBatch(view, responses)) return state;
      throw conflict('Invocation is not waiting for input.');
    }
    const pending = view.pending!;
    const answered = new Set<string>();
    const answers: InputResponse[] = [];
    for (const response of responses) {
      const raw = pending.rawRequestIds[response.requestId];
      if (raw === undefined) throw conflict(`Unknown input request: ${response.requestId}`);
      answered.add(response.requestId);
      answers.push({ ...response, requestId: raw });
    }
    if (answered.size !== responses.length || answered.size !== Object.keys(pending.rawRequestIds).length) {
      throw conflict('Responses must answer the complete pending input batch exactly once.');
    }
    try {
      await this.#sessions.execute({ kind: 'respond', sessionId: invocationId, responses: answers });
    } catch (error) {
      // The batch was answered or withdrawn between the read and the answer.
      if (error instanceof RequestError && (error.code === 'unknown_input_request' || error.code === 'session_not_active')) {
        throw conflict('Invocation input changed before the update could be applied.');
      }
      throw error;
    }
    return { invocationId, createdAt: state.createdAt, status: 'working', pollAfterMs: POLL_AFTER_MS };
  }

  /** Asks the running turn to stop; the state read after it may still be working. */
  async cancel(principal: Principal | undefined, invocationId: string): Promise<InvocationState> {
    const { state } = await this.#read(principal, invocationId);
    if (isTerminalStatus(state.status)) return state;
    await this.#sessions.execute({ kind: 'cancel', sessionId: invocationId });
    return (await this.#read(principal, invocationId)).state;
  }

  /** Resolves once the session's first turn is journaled; its opening is the worker's first write. */
  async #turnStarted(sessionId: string): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const check = () => {
      this.#journal.read(sessionId, 0, TURN_OPENING).then((lines) => {
        if (lines.some((line) => line.type === 'turn.started')) resolve();
      }, reject);
    };
    const listener = { appended: check, lost: check };
    this.#journal.subscribe(sessionId, listener);
    const timer = setTimeout(() => reject(new Error('The invocation turn did not start.')), TURN_START_TIMEOUT_MS);
    try {
      check();
      await promise;
    } finally {
      clearTimeout(timer);
      this.#journal.unsubscribe(sessionId, listener);
    }
  }

  async #read(principal: Principal | undefined, invocationId: string): Promise<{ state: InvocationState; view: TurnView }> {
    const record = await this.#journal.getSession(invocationId);
    // Another caller's invocation is indistinguishable from one that does not exist.
    if (!record || record.principalId !== principal?.id || record.eventsDropped) throw notFound();
    const view = foldTurn(await this.#stateEvents(invocationId));
    return { state: projectInvocation({ invocationId, createdAt: createdAt(record) }, view), view };
  }

  async #stateEvents(sessionId: string): Promise<EveEvent[]> {
    const events: EveEvent[] = [];
    for (let from = 0; ; from += PAGE) {
      const lines = await this.#journal.read(sessionId, from, PAGE);
      for (const line of lines) if (STATE_EVENT_TYPES.has(line.type)) events.push(JSON.parse(line.line) as EveEvent);
      if (lines.length < PAGE) return events;
    }
  }
}

const createdAt = (record: SessionRecord) => new Date(record.createdAt).toISOString();
