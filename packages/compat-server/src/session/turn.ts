import type {
  EveEventDataMap,
  EveEventDraft,
  InputRequest,
  InputResolution,
  InputResponse,
  JsonObject,
  TurnCoordinates,
} from '@eve-flue/eve-protocol';
import type { Principal } from '../auth/route-auth.ts';
import type { SessionRecord } from '../journal/journal.ts';
import { newRequestId, turnIdFor } from './ids.ts';
import type { SessionLog } from './session-log.ts';
import type {
  AuthorizationChallengeInput,
  SignInOutcome,
  InputQuestion,
  StepEnd,
  StepEventData,
  StepEventType,
  TurnContext,
  UserMessage,
} from '@eve-flue/session-contract';

interface OpenRequest {
  request: InputRequest;
  settle: (resolution: InputResolution) => void;
}

/** Why a turn was stopped from outside. */
export type AbortReason = 'cancelled' | 'cleared' | 'reset' | 'shutdown';

/** One running turn: its coordinates, delivery ids, open input requests and steering inbox. */
export class Turn implements TurnContext {
  readonly sessionId: string;
  readonly sequence: number;
  readonly turnId: string;
  readonly principal: Principal | undefined;
  readonly #log: SessionLog;
  readonly #abort = new AbortController();
  readonly #deliveryIds: string[];
  readonly #open = new Map<string, OpenRequest>();
  /** Sign-ins this turn is parked on, by attempt id: each withdrawn with an outcome. */
  readonly #signIns = new Map<string, (outcome: SignInOutcome) => void>();
  /** Sign-ins still being reported, so the turn's end waits for their last events. */
  readonly #parkedSignIns = new Set<Promise<SignInOutcome>>();
  #steering: UserMessage[] = [];
  #steeringArrived: (() => void) | undefined;
  #stepIndex = -1;
  #finalAnswer = '';
  #acceptsSteering = true;
  #closed = false;

  constructor(log: SessionLog, sequence: number, first: UserMessage) {
    this.#log = log;
    this.sessionId = log.sessionId;
    this.sequence = sequence;
    this.turnId = turnIdFor(sequence);
    this.principal = first.principal;
    this.#deliveryIds = [first.deliveryId];
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get stepIndex(): number {
    return this.#stepIndex;
  }

  /** The text of the turn's last completed assistant message: its answer. */
  get finalAnswer(): string {
    return this.#finalAnswer;
  }

  get deliveryIds(): readonly string[] {
    return this.#deliveryIds;
  }

  get abortReason(): AbortReason | undefined {
    return this.#abort.signal.aborted ? (this.#abort.signal.reason as AbortReason) : undefined;
  }

  /** Until the turn starts ending, a message from its caller can still steer it. */
  get acceptsSteering(): boolean {
    return this.#acceptsSteering && !this.#abort.signal.aborted;
  }

  get parkedOnInput(): boolean {
    return this.#open.size > 0 || this.#signIns.size > 0;
  }

  get coordinates(): TurnCoordinates {
    return { sequence: this.sequence, turnId: this.turnId };
  }

  /**
   * Journals events of this turn, stamped with its delivery ids as they are now. Once the turn
   * has ended, a runtime that is still winding down can write nothing more.
   */
  async write(drafts: readonly EveEventDraft[]): Promise<void> {
    if (this.#closed) return;
    await this.#log.write(drafts, this.#deliveryIds);
  }

  /** Stops steering: messages from now on wait for the next turn. Returns what arrived untaken. */
  stopSteering(): UserMessage[] {
    this.#acceptsSteering = false;
    return this.takeSteering();
  }

  /** Writes the turn's last events; nothing the runtime emits afterwards reaches the stream. */
  async close(drafts: readonly EveEventDraft[], record?: SessionRecord): Promise<void> {
    this.#closed = true;
    await this.#log.write(drafts, this.#deliveryIds, record);
  }

  /** Resolves when the turn is aborted. */
  aborted(): Promise<void> {
    const signal = this.#abort.signal;
    return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  async startStep(modelId: string): Promise<number> {
    const stepIndex = ++this.#stepIndex;
    await this.write([{ type: 'step.started', data: { ...this.coordinates, stepIndex, modelId } }]);
    return stepIndex;
  }

  async emit<T extends StepEventType>(type: T, data: StepEventData<T>): Promise<void> {
    if (type === 'message.completed') this.#finalAnswer = (data as StepEventData<'message.completed'>).message;
    // TypeScript cannot correlate `type` with `data` across a generic; the signature already does.
    await this.write([{ type, data: { ...data, ...this.#stepCoordinates() } } as unknown as EveEventDraft]);
  }

  async completeStep(end: StepEnd): Promise<void> {
    await this.write([{ type: 'step.completed', data: { ...this.#stepCoordinates(), ...end } }]);
  }

  async failStep(error: { code: string; message: string; details?: JsonObject }): Promise<void> {
    await this.write([{ type: 'step.failed', data: { ...this.#stepCoordinates(), ...error } }]);
  }

  async requestInput(questions: readonly InputQuestion[]): Promise<InputResolution[]> {
    const requests = questions.map((q) => ({ ...q, requestId: newRequestId() }));
    const resolutions = requests.map(
      (request) => new Promise<InputResolution>((settle) => this.#open.set(request.requestId, { request, settle })),
    );
    await this.write([
      { type: 'input.requested', data: { ...this.#stepCoordinates(), requests } },
      { type: 'turn.waiting', data: { ...this.coordinates, on: 'input' } },
    ]);
    return Promise.all(resolutions);
  }

  async awaitAuthorization(challenge: AuthorizationChallengeInput, result: Promise<SignInOutcome>): Promise<SignInOutcome> {
    const parked = this.#parkOnSignIn(challenge, result);
    this.#parkedSignIns.add(parked);
    try {
      return await parked;
    } finally {
      this.#parkedSignIns.delete(parked);
    }
  }

  async #parkOnSignIn(challenge: AuthorizationChallengeInput, result: Promise<SignInOutcome>): Promise<SignInOutcome> {
    const common = { ...this.#stepCoordinates(), name: challenge.name, attemptId: challenge.attemptId, ...this.#principalField() };
    const withdrawn = new Promise<SignInOutcome>((resolve) => this.#signIns.set(challenge.attemptId, resolve));
    if (this.signal.aborted) this.#signIns.get(challenge.attemptId)!({ outcome: 'declined', reason: 'the turn ended' });
    await this.write([
      {
        type: 'authorization.required',
        data: {
          ...common,
          description: challenge.description,
          authorization: { url: challenge.url, displayName: challenge.displayName, expiresAt: new Date(challenge.expiresAt).toISOString() },
          webhookUrl: challenge.webhookUrl,
        },
      },
      { type: 'turn.waiting', data: { ...this.coordinates, on: 'input' } },
    ]);
    const settled = await Promise.race([result, withdrawn]);
    this.#signIns.delete(challenge.attemptId);
    const completed = { ...common, ...this.#stepCoordinates(), outcome: settled.outcome, ...(settled.outcome === 'authorized' ? {} : { reason: settled.reason }) };
    await this.write([
      ...(settled.outcome === 'authorized'
        ? [{ type: 'authorization.granted' as const, data: { ...common, ...this.#stepCoordinates(), connection: challenge.name } }]
        : []),
      { type: 'authorization.completed', data: completed },
    ]);
    return settled;
  }

  /** Which of these responses address a request this turn has open. */
  answers(responses: readonly InputResponse[]): InputResponse[] {
    return responses.filter((r) => this.#open.has(r.requestId));
  }

  /** Answers open requests (from `respond()`), journaling `input.resolved` before resuming. */
  async answer(responses: readonly InputResponse[], deliveryId: string): Promise<void> {
    this.#deliveryIds.push(deliveryId);
    const resolutions = this.answers(responses).map((response) => {
      const { request } = this.#open.get(response.requestId)!;
      return { kind: request.kind, outcome: outcomeOf(request, response), requestId: request.requestId, response };
    });
    await this.#resolve(resolutions);
  }

  /** Adds a steering message to this turn; it reaches the runtime at its next boundary. */
  async steer(message: UserMessage): Promise<void> {
    this.#deliveryIds.push(message.deliveryId);
    this.#withdrawSignIns({ outcome: 'declined', reason: 'the person sent another message' });
    await this.#withdrawOpenRequests('ignored');
    await this.write([{ type: 'message.received', data: messageReceived(this.coordinates, message) }]);
    this.#steering.push(message);
    this.#steeringArrived?.();
  }

  takeSteering(): UserMessage[] {
    const taken = this.#steering;
    this.#steering = [];
    return taken;
  }

  waitForSteering(): Promise<void> {
    if (this.#steering.length > 0 || this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.#steeringArrived = resolve;
      this.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  abort(reason: AbortReason): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(reason);
    // A bridge that stops has not declined anything: the sign-in may still finish after a restart.
    this.#withdrawSignIns(
      reason === 'shutdown' ? { outcome: 'failed', reason: 'the bridge stopped' } : { outcome: 'declined', reason: `the turn was ${reason}` },
    );
    this.#steeringArrived?.();
  }

  #withdrawSignIns(outcome: SignInOutcome): void {
    for (const withdraw of [...this.#signIns.values()]) withdraw(outcome);
  }

  #principalField() {
    return this.principal ? { principalId: this.principal.id } : {};
  }

  /** Resolves every open request as `cancelled` and every sign-in as declined: no prompt outlives its turn. */
  async withdrawOpenRequests(): Promise<void> {
    this.#withdrawSignIns({ outcome: 'declined', reason: 'the turn ended' });
    await Promise.allSettled([...this.#parkedSignIns]);
    await this.#withdrawOpenRequests('cancelled');
  }

  async #withdrawOpenRequests(outcome: 'cancelled' | 'ignored'): Promise<void> {
    const resolutions = [...this.#open.values()].map(({ request }) => ({ kind: request.kind, outcome, requestId: request.requestId }));
    await this.#resolve(resolutions);
  }

  async #resolve(resolutions: InputResolution[]): Promise<void> {
    if (resolutions.length === 0) return;
    const settled = resolutions.map((r) => {
      const open = this.#open.get(r.requestId)!;
      this.#open.delete(r.requestId);
      return () => open.settle(r);
    });
    await this.write([{ type: 'input.resolved', data: { ...this.#stepCoordinates(), resolutions } }]);
    for (const settle of settled) settle();
  }

  #stepCoordinates() {
    return { ...this.coordinates, stepIndex: Math.max(this.#stepIndex, 0) };
  }
}

const APPROVING_OPTIONS = new Set(['approve', 'approved', 'allow', 'yes']);

function outcomeOf(request: InputRequest, response: InputResponse): InputResolution['outcome'] {
  if (request.kind !== 'tool-approval') return 'answered';
  return response.optionId !== undefined && APPROVING_OPTIONS.has(response.optionId) ? 'approved' : 'denied';
}

/**
 * `message.received` for a message. Its text is journaled once: a message of text only carries
 * it in `message` alone (clients read `parts`, else `message`); `parts` appear when there is a file.
 */
export function messageReceived(coordinates: TurnCoordinates, message: UserMessage): EveEventDataMap['message.received'] {
  const structured = message.parts.some((part) => part.type !== 'text');
  return { ...coordinates, message: message.text, ...(structured ? { parts: message.parts } : {}) };
}
