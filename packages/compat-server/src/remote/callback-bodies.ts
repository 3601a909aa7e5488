import type { RemoteCaller } from './protocol.ts';

/** A journaled event as the callbacks read it. */
export interface JournaledEvent {
  type: string;
  data: Record<string, unknown>;
  meta?: { deliveryIds?: string[] };
}

/** Eve's `usageDelta` (`tokenUsageWithCostSchema`). */
export interface UsageDelta {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd?: number;
}

/** What a turn produced so far, read from its events: its answer, structured result and usage. */
export class TurnSummary {
  message = '';
  result: unknown = undefined;
  readonly usage: UsageDelta = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

  add(event: JournaledEvent): void {
    if (event.type === 'message.completed' && typeof event.data.message === 'string') this.message = event.data.message;
    else if (event.type === 'result.completed') this.result = event.data.result;
    else if (event.type === 'step.completed') {
      const usage = event.data.usage as { inputTokens?: number; outputTokens?: number; costUsd?: number } | undefined;
      this.usage.inputTokens += count(usage?.inputTokens);
      this.usage.outputTokens += count(usage?.outputTokens);
      if (typeof usage?.costUsd === 'number' && Number.isFinite(usage.costUsd) && usage.costUsd >= 0) this.usage.costUsd = (this.usage.costUsd ?? 0) + usage.costUsd;
    }
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0);

/** Eve's code for a child's failure, as its receiver reports it. */
const SUBAGENT_EXECUTION_FAILED = 'SUBAGENT_EXECUTION_FAILED';

/**
 * The callback an event owes the parent, in the exact shapes Eve's receiver sends
 * (`subagents/parent-notification.js`, `execution/forward-session-input.js`, and for protocol 1
 * `execution/legacy-remote-agent/protocol.js`); undefined for an event the parent is not told.
 * Child turns end `parked`: the session waits for the parent's next message.
 */
export function callbackBody(
  event: JournaledEvent,
  { caller, structured, sessionId, turn }: { caller: RemoteCaller; structured: boolean; sessionId: string; turn: TurnSummary },
): Record<string, unknown> | undefined {
  const { callId, subagentName } = caller.callback;
  const usageDelta = { ...turn.usage };
  switch (event.type) {
    case 'turn.completed': {
      const output = structured ? (turn.result ?? null) : turn.message;
      return { callId, kind: 'turn.completed', outcome: { kind: 'parked', result: { kind: 'succeeded', output }, usageDelta }, output, sessionId, subagentName };
    }
    case 'turn.failed': {
      const error = { code: SUBAGENT_EXECUTION_FAILED, message: String(event.data.message ?? 'The agent invocation failed.') };
      return { callId, error, kind: 'turn.failed', outcome: { kind: 'parked', result: { kind: 'failed', error }, usageDelta }, sessionId, subagentName };
    }
    case 'turn.cancelled': {
      const error = { code: SUBAGENT_EXECUTION_FAILED, message: 'The agent invocation was cancelled.' };
      return { callId, error, kind: 'turn.failed', outcome: { kind: 'parked', result: { kind: 'cancelled' }, usageDelta }, sessionId, subagentName };
    }
    case 'input.requested':
      if (caller.protocolVersion === 1) {
        if (caller.taskId === undefined) return undefined;
        return { callId, childContinuationToken: sessionId, childSessionId: sessionId, event: event.data, kind: 'task.input-requested', subagentName, taskId: caller.taskId };
      }
      return { callId, childContinuationToken: sessionId, childSessionId: sessionId, event: event.data, inputSource: 'session', kind: 'subagent-input-request', subagentName };
    case 'authorization.required':
    case 'authorization.completed': {
      const forwarded = { type: event.type, data: event.data };
      if (caller.protocolVersion === 1) {
        if (caller.taskId === undefined) return undefined;
        return { callId, childContinuationToken: sessionId, childSessionId: sessionId, event: forwarded, kind: 'task.authorization', subagentName, taskId: caller.taskId };
      }
      return { callId, childSessionId: sessionId, event: forwarded, kind: 'subagent-authorization-event', subagentName };
    }
    default:
      return undefined;
  }
}
