import { createHash } from 'node:crypto';
import type { AuthorizationChallenge, EveEvent, InputRequest, InputResponse } from '@eve-flue/eve-protocol';

/**
 * An invocation is one Eve session; its state is read off that session's journal, as Eve reads
 * an invocation off its run's events (`eve/dist/src/internal/invocation/workflow-execution.js`).
 */

/** How long a caller should wait before the next `agent_get` while work goes on (Eve's figure). */
export const POLL_AFTER_MS = 1_000;

/** The event types the state depends on: the only journal lines that are parsed. */
export const STATE_EVENT_TYPES: ReadonlySet<string> = new Set([
  'turn.started',
  'input.requested',
  'input.resolved',
  'authorization.required',
  'authorization.completed',
  'message.completed',
  'turn.waiting',
  'turn.completed',
  'turn.cancelled',
  'turn.failed',
  'session.failed',
]);

/** An input request as an MCP caller sees it: keyed by an id derived from the event that asked it. */
export type PublishedInputRequest = InputRequest;

export interface AuthorizationRequest {
  name: string;
  description: string;
  authorization?: AuthorizationChallenge;
  webhookUrl?: string;
}

export interface InvocationFailure {
  /** JSON-RPC's internal error, as Eve reports every failed invocation. */
  code: -32603;
  message: string;
  data: { runId: string; eveCode?: string; errorId?: string; name?: string };
}

interface Base {
  invocationId: string;
  createdAt: string;
}

export type InvocationState =
  | (Base & { status: 'working'; pollAfterMs: number; result?: string })
  | (Base & { status: 'input_required'; inputRequests: Record<string, PublishedInputRequest>; result?: string })
  | (Base & { status: 'authorization_required'; authorizations: AuthorizationRequest[]; pollAfterMs: number; result?: string })
  | (Base & { status: 'completed'; result?: string })
  | (Base & { status: 'failed'; error: InvocationFailure })
  | (Base & { status: 'cancelled' });

export type InvocationStatus = InvocationState['status'];

export const isTerminalStatus = (status: InvocationStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/** The pending input batch: published ids, and the session's own request ids behind them. */
export interface PendingBatch {
  requests: Record<string, PublishedInputRequest>;
  rawRequestIds: Record<string, string>;
}

/** The last batch answered, and the answers the session recorded for it. */
export interface ResolvedBatch {
  batch: PendingBatch;
  responses: Map<string, InputResponse | undefined>;
}

/** Eve's published request id: stable for one request of one `input.requested` event. */
export function publishedRequestId(eventId: string, requestId: string): string {
  return createHash('sha256').update(JSON.stringify([eventId, requestId]), 'utf8').digest('hex');
}

function batchOf(event: Extract<EveEvent, { type: 'input.requested' }>): PendingBatch {
  const requests: Record<string, PublishedInputRequest> = {};
  const rawRequestIds: Record<string, string> = {};
  for (const request of event.data.requests) {
    const id = publishedRequestId(event.meta.id, request.requestId);
    rawRequestIds[id] = request.requestId;
    requests[id] = { ...request, requestId: id };
  }
  return { requests, rawRequestIds };
}

function withoutResolved(batch: PendingBatch, resolved: readonly { requestId: string }[]): PendingBatch | undefined {
  const done = new Set(resolved.map((r) => r.requestId));
  const requests: Record<string, PublishedInputRequest> = {};
  const rawRequestIds: Record<string, string> = {};
  for (const [id, raw] of Object.entries(batch.rawRequestIds)) {
    if (done.has(raw)) continue;
    rawRequestIds[id] = raw;
    requests[id] = batch.requests[id]!;
  }
  return Object.keys(rawRequestIds).length === 0 ? undefined : { requests, rawRequestIds };
}

/** What the latest turn's events say: its pending batch, sign-ins, reply and ending. */
export interface TurnView {
  pending?: PendingBatch;
  resolved?: ResolvedBatch;
  authorizations: Map<string, AuthorizationRequest>;
  result?: string;
  ending?: 'completed' | 'cancelled' | Extract<EveEvent, { type: 'turn.failed' | 'session.failed' }>;
}

/** Folds a session's state events, oldest first, into the view of its latest turn. */
export function foldTurn(events: Iterable<EveEvent>): TurnView {
  let view: TurnView = { authorizations: new Map() };
  for (const event of events) {
    switch (event.type) {
      case 'turn.started':
        view = { authorizations: new Map(), ...(view.resolved ? { resolved: view.resolved } : {}) };
        break;
      case 'input.requested':
        view.pending = batchOf(event);
        break;
      case 'input.resolved': {
        if (!view.pending) break;
        const responses = new Map(event.data.resolutions.map((r) => [r.requestId, r.response]));
        view.resolved = { batch: view.pending, responses };
        const rest = withoutResolved(view.pending, event.data.resolutions);
        if (rest) view.pending = rest;
        else delete view.pending;
        break;
      }
      case 'authorization.required': {
        const request: AuthorizationRequest = { name: event.data.name, description: event.data.description };
        if (event.data.authorization) request.authorization = event.data.authorization;
        if (event.data.webhookUrl !== undefined) request.webhookUrl = event.data.webhookUrl;
        view.authorizations.set(event.data.name, request);
        break;
      }
      case 'authorization.completed':
        view.authorizations.delete(event.data.name);
        break;
      case 'message.completed':
        if (event.data.finishReason !== 'tool-calls') view.result = event.data.message;
        break;
      case 'turn.waiting':
        delete view.result;
        break;
      case 'turn.completed':
        view.ending = 'completed';
        break;
      case 'turn.cancelled':
        view.ending = 'cancelled';
        break;
      case 'turn.failed':
      case 'session.failed':
        view.ending = event;
        break;
      default:
        break;
    }
  }
  return view;
}

/** The invocation's state, as Eve projects it: a failure first, then sign-ins, then input, then the turn's end. */
export function projectInvocation(base: Base, view: TurnView): InvocationState {
  const result = view.result === undefined ? {} : { result: view.result };
  const ending = view.ending;
  if (typeof ending === 'object') return { ...base, status: 'failed', error: failureOf(base.invocationId, ending) };
  if (view.authorizations.size > 0) return { ...base, status: 'authorization_required', authorizations: [...view.authorizations.values()], pollAfterMs: POLL_AFTER_MS, ...result };
  if (view.pending) return { ...base, status: 'input_required', inputRequests: view.pending.requests, ...result };
  if (ending === 'cancelled') return { ...base, status: 'cancelled' };
  if (ending === 'completed') return { ...base, status: 'completed', ...result };
  return { ...base, status: 'working', pollAfterMs: POLL_AFTER_MS, ...result };
}

const MAX_FAILURE_MESSAGE = 160;

function failureOf(runId: string, event: Extract<EveEvent, { type: 'turn.failed' | 'session.failed' }>): InvocationFailure {
  const data: InvocationFailure['data'] = { runId, eveCode: event.data.code };
  const errorId = event.data.details?.errorId;
  if (typeof errorId === 'string') data.errorId = errorId;
  const name = event.data.details?.name;
  if (typeof name === 'string' && name.trim()) data.name = name.trim();
  const text = event.data.message.trim() || data.name || 'Invocation failed.';
  const message = text.length <= MAX_FAILURE_MESSAGE ? text : `${text.slice(0, MAX_FAILURE_MESSAGE - 1).trimEnd()}…`;
  return { code: -32603, message, data };
}

/** Whether `responses` are exactly the answers already recorded for the last answered batch. */
export function repeatsResolvedBatch(view: TurnView, responses: readonly InputResponse[]): boolean {
  const resolved = view.resolved;
  if (!resolved || responses.length !== resolved.responses.size) return false;
  const seen = new Set<string>();
  for (const response of responses) {
    const raw = resolved.batch.rawRequestIds[response.requestId];
    if (raw === undefined || seen.has(raw) || !resolved.responses.has(raw)) return false;
    seen.add(raw);
    const recorded = resolved.responses.get(raw);
    if (recorded?.optionId !== response.optionId || recorded?.text !== response.text) return false;
  }
  return true;
}
