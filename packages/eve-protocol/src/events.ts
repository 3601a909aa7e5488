/**
 * The events of Eve's session stream, version 26, as the real `eve/client` reads them.
 * Field sets follow `eve/dist/src/protocol/message.d.ts`; see docs/eve-protocol.md.
 */

export interface TurnCoordinates {
  sequence: number;
  turnId: string;
}

export interface StepCoordinates extends TurnCoordinates {
  stepIndex: number;
}

/** What JSON can carry: the type of every tool input, output and result on the stream, as Eve's. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** Eve's token usage of a session or a turn (`session.waiting`, `turn.waiting`, …): every count present. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd?: number;
}

/** One step's usage (`step.completed`): what the provider reported. */
export type StepUsage = Partial<TokenUsage>;

export interface ErrorDetails {
  code: string;
  message: string;
  details?: JsonObject;
}

export type TextPart = { type: 'text'; text: string };
/** A file as the stream records it: never the bytes, only what identifies them. */
export type FilePartRecord = { type: 'file'; mediaType: string; filename?: string; size?: number; url?: string };
export type ReceivedPart = TextPart | FilePartRecord;

export type ToolCallAction = { kind: 'tool-call'; callId: string; toolName: string; input: JsonObject };
export type ToolResult = {
  kind: 'tool-result';
  callId: string;
  toolName: string;
  output: JsonValue;
  isError?: boolean;
  errorName?: string;
};

export type InputOption = { id: string; label: string; description?: string; style?: 'default' | 'primary' | 'danger' };
export interface InputRequest {
  requestId: string;
  kind: 'tool-approval' | 'question' | 'session-limit';
  prompt: string;
  action: ToolCallAction;
  options?: InputOption[];
  display?: 'confirmation' | 'select' | 'text';
  allowFreeform?: boolean;
}
export interface InputResponse {
  requestId: string;
  optionId?: string;
  text?: string;
}
export type InputOutcome = 'approved' | 'denied' | 'answered' | 'cancelled' | 'ignored';
export interface InputResolution {
  kind: InputRequest['kind'];
  outcome: InputOutcome;
  requestId: string;
  response?: InputResponse;
}

export interface AuthorizationChallenge {
  url?: string;
  userCode?: string;
  expiresAt?: string;
  instructions?: string;
  displayName?: string;
}
export type AuthorizationOutcome = 'authorized' | 'declined' | 'failed' | 'timed-out';

/** Which link in an approval's chain of responders an event is about (Eve's approvals). */
export type ApprovalCandidateOutcome = 'pending' | 'rejected' | 'failed' | 'timed-out' | 'stale';
/** How a task started by a turn (a subagent, a remote agent, a background tool) ended. */
export type TaskStatus = 'completed' | 'failed' | 'cancelled';
export type TaskCancelReason = 'task_cancel' | 'turn_cancelled' | 'turn_ended';

export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** Every event type and its `data`. */
export interface EveEventDataMap {
  'session.started': Record<string, never>;
  'turn.started': TurnCoordinates;
  'message.received': TurnCoordinates & { message: string; parts?: ReceivedPart[] };
  'step.started': StepCoordinates & { modelId: string };
  'reasoning.appended': StepCoordinates & { reasoningDelta: string };
  'reasoning.completed': StepCoordinates & { reasoning: string };
  'message.appended': StepCoordinates & { messageDelta: string };
  'message.completed': StepCoordinates & { message: string; finishReason: FinishReason };
  'action.input.appended': StepCoordinates & { callId: string; toolName: string; inputTextDelta: string };
  'actions.requested': StepCoordinates & { actions: ToolCallAction[] };
  'action.result': StepCoordinates & {
    result: ToolResult;
    status: 'completed' | 'failed' | 'rejected';
    error?: { code: string; message: string; name?: string };
  };
  /** A partial result of a running tool call (progress). */
  'action.partial': StepCoordinates & { result: ToolResult };
  'input.requested': StepCoordinates & { requests: InputRequest[]; callId?: string; taskId?: string };
  'input.resolved': StepCoordinates & { resolutions: InputResolution[] };
  /** Eve's fields only: `name` is the connection, `authorization.url` where a person signs in. */
  'authorization.required': StepCoordinates & {
    name: string;
    description: string;
    attemptId: string;
    authorization: AuthorizationChallenge;
    principalId?: string;
    webhookUrl?: string;
  };
  /** Bridge extension, ignored by `eve/client`: the token was stored. */
  'authorization.granted': StepCoordinates & { name: string; connection: string; attemptId: string; principalId?: string };
  'authorization.completed': StepCoordinates & {
    name: string;
    outcome: AuthorizationOutcome;
    attemptId: string;
    principalId?: string;
    reason?: string;
  };
  'approval.candidate': StepCoordinates & {
    candidateId: string;
    outcome: ApprovalCandidateOutcome;
    requestId: string;
    responderPrincipalId: string;
    reason?: string;
  };
  'approval.settled': StepCoordinates & { outcome: 'approved' | 'cancelled'; requestId: string; responderPrincipalId: string };
  /** A child agent's session began (a subagent, or a remote agent at `remote.url`). */
  'agent.started': {
    callId: string;
    turnId: string;
    taskId?: string;
    name: string;
    sessionId: string;
    streamPath: string;
    remote?: { resolverId?: string; url: string };
  };
  'task.started': { callId: string; kind: 'agent' | 'tool'; name: string; taskId: string; turnId: string };
  'task.settled': {
    callId: string;
    taskId: string;
    turnId: string;
    status: TaskStatus;
    kind?: 'agent' | 'tool';
    name?: string;
    output?: JsonValue;
    error?: { message: string };
    cancel?: { reason: TaskCancelReason };
  };
  'step.completed': StepCoordinates & { finishReason: FinishReason; usage?: StepUsage };
  'step.failed': StepCoordinates & ErrorDetails;
  'turn.waiting': TurnCoordinates & { on: 'input' | 'tasks'; usage?: TokenUsage };
  'turn.completed': TurnCoordinates;
  'turn.cancelled': TurnCoordinates;
  'turn.failed': TurnCoordinates & ErrorDetails & { terminal: boolean };
  'result.completed': StepCoordinates & { result: JsonValue };
  'context.cleared': TurnCoordinates & { sessionId: string };
  'compaction.requested': StepCoordinates & { sessionId: string; modelId: string; usageInputTokens: number | null };
  'compaction.completed': StepCoordinates & { sessionId: string; modelId: string };
  'session.waiting': { continuationToken: ''; wait: 'next-user-message'; usage?: TokenUsage };
  /** Without usage to report, no `data` at all, as Eve sends it. */
  'session.completed': { usage: TokenUsage } | undefined;
  'session.failed': ErrorDetails & { sessionId: string; usage?: TokenUsage };
}

export type EveEventType = keyof EveEventDataMap;

/** An event before the journal gives it an envelope: what producers build. */
export type EveEventDraft = { [T in EveEventType]: { type: T; data: EveEventDataMap[T] } }[EveEventType];

/** Events after which the client's `result()` returns: the turn's boundary as Eve defines it. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<EveEventType> = new Set(['session.completed', 'session.failed']);

export function isTerminal(type: string): boolean {
  return TERMINAL_EVENT_TYPES.has(type as EveEventType);
}
