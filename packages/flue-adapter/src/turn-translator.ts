import type { FlueObservation } from '@flue/runtime';
import { TurnError, type TurnContext } from '@eve-flue/session-contract';
import { toJson, toJsonObject, type FinishReason, type JsonValue, type StepUsage, type ToolCallAction } from '@eve-flue/eve-protocol';
import type { RecordedCall } from './connection-tools.ts';
import type { LiveDelta } from './live-tap.ts';
import { EveNamesInStream, withEveNames } from './eve-names.ts';
import { connectionToolOutput } from './tool-output.ts';

/** What a call's id is asked for. */
type CallIdPurpose = 'approval' | 'arguments';

type Observation<T extends FlueObservation['type']> = Extract<FlueObservation, { type: T }>;

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  toolUse: 'tool-calls',
  length: 'length',
  error: 'error',
  aborted: 'other',
};

/**
 * Turns one Flue instance's runtime events into the Eve events of the running turn: model
 * turns become steps, deltas become appends, tool calls and results become actions.
 * Every write is chained, so Eve events keep Flue's order.
 */
export class TurnTranslator {
  readonly #turn: TurnContext;
  readonly #toEveName: (flueName: string) => string;
  readonly #modelId: string;
  #written: Promise<void> = Promise.resolve();
  #writeError: unknown;
  /** The current step's text so far: updated as events arrive, before their writes run. */
  #text = '';
  /** The current step's text as sent: Flue tool names swapped for Eve names. */
  #sent: EveNamesInStream;
  #inStep = false;
  /** Flue model turns whose step has started here (from a live delta or from Flue's report). */
  readonly #startedTurns = new Set<string>();
  /** Flue model turns whose deltas arrived live: Flue's own later copies are skipped. */
  readonly #liveTurns = new Set<string>();
  /** Tool calls Flue reported started and not yet finished, by Flue tool name. */
  readonly #runningTools = new Map<string, number>();
  readonly #toolWaiters = new Map<string, (() => void)[]>();
  /** Each started call's key (tool name and input), by call id. */
  readonly #callKeys = new Map<string, string>();
  /** Call ids already handed out, per purpose, so a second identical call gets its own. */
  readonly #claimed: Record<CallIdPurpose, Set<string>> = { approval: new Set(), arguments: new Set() };
  /** How connection tool calls ended upstream, by call key, in call order. */
  readonly #recorded = new Map<string, Promise<RecordedCall | undefined>[]>();
  /** The first failure a step reported, for the turn's own error. */
  stepError: TurnError | undefined;

  constructor(turn: TurnContext, modelId: string, toEveName: (flueName: string) => string) {
    this.#turn = turn;
    this.#modelId = modelId;
    this.#toEveName = toEveName;
    this.#sent = new EveNamesInStream(toEveName);
  }

  /**
   * Resolves once Flue has reported the start of a call to `flueToolName`, so that a sign-in the
   * call runs into is reported after the call itself. Flue delivers events up to about a second
   * late; `giveUpMs` bounds the wait should the report never come.
   */
  toolStarted(flueToolName: string, giveUpMs: number): Promise<void> {
    if ((this.#runningTools.get(flueToolName) ?? 0) > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, giveUpMs);
      const waiters = this.#toolWaiters.get(flueToolName) ?? [];
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#toolWaiters.set(flueToolName, waiters);
    });
  }

  /** What a connection tool call brought back upstream (or that it was denied), for its `action.result`. */
  record(flueToolName: string, input: unknown, outcome: Promise<RecordedCall | undefined>): void {
    const key = callKey(flueToolName, input);
    this.#recorded.set(key, [...(this.#recorded.get(key) ?? []), outcome]);
  }

  /**
   * The id of the started call of `flueToolName` with `input` that has not been claimed for
   * `purpose` yet (asking an approval, resolving provided arguments): two identical calls get one each.
   */
  claimCallId(flueToolName: string, input: unknown, purpose: CallIdPurpose): string | undefined {
    const key = callKey(flueToolName, input);
    const claimed = this.#claimed[purpose];
    const callId = [...this.#callKeys].find(([id, k]) => k === key && !claimed.has(id))?.[0];
    if (callId) claimed.add(callId);
    return callId;
  }

  /** Resolves when everything handled so far is journaled; rejects if a write failed. */
  async flushed(): Promise<void> {
    await this.#written;
    if (this.#writeError) throw this.#writeError;
  }

  /** A delta straight from the model (see LiveTap), ahead of Flue's own report of it. */
  live(flueTurnId: string, delta: LiveDelta): void {
    this.#liveTurns.add(flueTurnId);
    this.#startStep(flueTurnId);
    this.#delta(delta);
  }

  handle(observation: FlueObservation): void {
    const flueTurnId = (observation as { turnId?: string }).turnId ?? '';
    switch (observation.type) {
      case 'turn_start':
        if (observation.purpose === 'agent') this.#startStep(observation.turnId);
        return;
      case 'text_delta':
        if (!this.#liveTurns.has(flueTurnId)) this.#delta({ kind: 'text', delta: observation.text });
        return;
      case 'thinking_delta':
        if (!this.#liveTurns.has(flueTurnId)) this.#delta({ kind: 'reasoning', delta: observation.delta });
        return;
      case 'thinking_end':
        this.#then(() => this.#turn.emit('reasoning.completed', { reasoning: observation.content }));
        return;
      case 'toolcall_delta':
        this.#then(() =>
          this.#turn.emit('action.input.appended', {
            callId: observation.toolCallId,
            toolName: this.#toEveName(observation.toolName),
            inputTextDelta: observation.argumentTextDelta,
          }),
        );
        return;
      case 'turn':
        if (observation.purpose === 'agent') this.#endStep(observation);
        return;
      case 'tool_start':
        this.#callKeys.set(observation.toolCallId, callKey(observation.toolName, observation.args));
        this.#runningTools.set(observation.toolName, (this.#runningTools.get(observation.toolName) ?? 0) + 1);
        for (const wake of this.#toolWaiters.get(observation.toolName) ?? []) wake();
        this.#toolWaiters.delete(observation.toolName);
        return;
      case 'tool':
        this.#runningTools.set(observation.toolName, Math.max(0, (this.#runningTools.get(observation.toolName) ?? 1) - 1));
        this.#toolResult(observation);
        return;
      default:
        return;
    }
  }

  #startStep(flueTurnId: string): void {
    if (this.#startedTurns.has(flueTurnId)) return;
    this.#startedTurns.add(flueTurnId);
    this.#text = '';
    this.#inStep = true;
    this.#then(() => this.#turn.startStep(this.#modelId));
  }

  #delta({ kind, delta }: LiveDelta): void {
    if (kind === 'reasoning') {
      this.#then(() => this.#turn.emit('reasoning.appended', { reasoningDelta: delta }));
      return;
    }
    this.#text += delta;
    const sendable = this.#sent.push(delta);
    if (sendable) this.#then(() => this.#turn.emit('message.appended', { messageDelta: sendable }));
  }

  #endStep(observation: Observation<'turn'>): void {
    this.#liveTurns.delete(observation.turnId);
    const response = observation.response;
    const finishReason = FINISH_REASONS[response.finishReason ?? 'stop'] ?? 'other';
    const text = withEveNames(this.#text, this.#toEveName);
    const held = this.#sent.flush();
    if (held) this.#then(() => this.#turn.emit('message.appended', { messageDelta: held }));
    // A step Flue reported no start for (a subscriber attached mid-step) still gets one.
    const unstarted = !this.#inStep;
    this.#text = '';
    this.#inStep = false;
    const calls: ToolCallAction[] = (response.output?.content ?? [])
      .filter((part) => part.type === 'toolCall')
      .map((call) => ({ kind: 'tool-call', callId: call.id, toolName: this.#toEveName(call.name), input: toJsonObject(call.arguments) }));
    const usage = toUsage(response.usage);
    this.#then(async () => {
      if (unstarted) await this.#turn.startStep(this.#modelId);
      if (text.length > 0) await this.#turn.emit('message.completed', { message: text, finishReason });
      if (calls.length > 0) await this.#turn.emit('actions.requested', { actions: calls });
      if (observation.isError && finishReason === 'error') {
        const message = withEveNames(response.error?.message ?? 'The model call failed.', this.#toEveName);
        this.stepError ??= new TurnError('MODEL_CALL_FAILED', message);
        await this.#turn.failStep({ code: 'MODEL_CALL_FAILED', message });
        return;
      }
      await this.#turn.completeStep({ finishReason, ...(usage ? { usage } : {}) });
    });
  }

  #toolResult(observation: Observation<'tool'>): void {
    const toolName = this.#toEveName(observation.toolName);
    const key = this.#callKeys.get(observation.toolCallId);
    this.#callKeys.delete(observation.toolCallId);
    const recorded = key === undefined ? undefined : this.#recorded.get(key)?.shift();
    const raw = toJson(observation.effectiveResult ?? resultText(observation.result));
    const text = typeof raw === 'string' ? withEveNames(raw, this.#toEveName) : raw;
    this.#then(async () => {
      const upstream = recorded && (await Promise.race([recorded, delay(RECORD_WAIT_MS)]));
      const result = { kind: 'tool-result' as const, callId: observation.toolCallId, toolName };
      if (upstream?.kind === 'denied') {
        await this.#turn.emit('action.result', {
          result: { ...result, output: upstream.reason, isError: true },
          status: 'failed',
          error: { code: 'TOOL_EXECUTION_DENIED', message: upstream.reason },
        });
        return;
      }
      const output = upstream?.kind === 'result' && !observation.isError ? connectionToolOutput(upstream.result, upstream.hasOutputSchema) : text;
      await this.#turn.emit('action.result', {
        result: { ...result, output, ...(observation.isError ? { isError: true } : {}) },
        status: observation.isError ? 'failed' : 'completed',
        ...(observation.isError ? { error: { code: 'TOOL_EXECUTION_FAILED', message: withEveNames(String(resultText(observation.result)), this.#toEveName) } } : {}),
      });
    });
  }

  /** Queues a write; after a failed one nothing more is written, and flushed() reports it. */
  #then(write: () => Promise<unknown>): void {
    this.#written = this.#written
      .then(async () => {
        if (!this.#writeError) await write();
      })
      .catch((error: unknown) => {
        this.#writeError ??= error;
      });
  }
}

/** Longest wait for a call's upstream answer to be read once Flue reported the call ended. */
const RECORD_WAIT_MS = 2_000;

const delay = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref());

function callKey(flueToolName: string, input: unknown): string {
  return `${flueToolName}\u0000${JSON.stringify(input ?? {})}`;
}

function resultText(result: unknown): JsonValue {
  const content = (result as { content?: { type: string; text?: string }[] })?.content;
  if (!Array.isArray(content)) return toJson(result);
  return content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('');
}

function toUsage(usage: Observation<'turn'>['response']['usage']): StepUsage | undefined {
  if (!usage) return undefined;
  return {
    inputTokens: usage.input,
    outputTokens: usage.output,
    cacheReadTokens: usage.cacheRead,
    cacheWriteTokens: usage.cacheWrite,
    ...(usage.cost.total > 0 ? { costUsd: usage.cost.total } : {}),
  };
}
