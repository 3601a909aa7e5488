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

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
}

export interface ErrorDetails {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export type TextPart = { type: 'text'; text: string };
/** A file as the stream records it: never the bytes, only what identifies them. */
export type FilePartRecord = { type: 'file'; mediaType: string; filename?: string; size?: number; url?: string };
export type ReceivedPart = TextPart | FilePartRecord;

export type ToolCallAction = { kind: 'tool-call'; callId: string; toolName: string; input: unknown };
export type ToolResult = {
  kind: 'tool-result';
  callId: string;
  toolName: string;
  output: unknown;
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
  'input.requested': StepCoordinates & { requests: InputRequest[] };
  'input.resolved': StepCoordinates & { resolutions: InputResolution[] };
  'authorization.required': StepCoordinates & {
    name: string;
    description: string;
    attemptId: string;
    authorization: AuthorizationChallenge;
    principalId?: string;
    webhookUrl?: string;
    /** Bridge extension: the connection's name, same as `name`. */
    connection: string;
    /** Bridge extension: the URL a person opens to sign in, same as `authorization.url`. */
    authUrl: string;
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
  'step.completed': StepCoordinates & { finishReason: FinishReason; usage?: Usage };
  'step.failed': StepCoordinates & ErrorDetails;
  'turn.waiting': TurnCoordinates & { on: 'input' | 'tasks' };
  'turn.completed': TurnCoordinates;
  'turn.cancelled': TurnCoordinates;
  'turn.failed': TurnCoordinates & ErrorDetails & { terminal: boolean };
  'result.completed': StepCoordinates & { result: unknown };
  'context.cleared': TurnCoordinates & { sessionId: string };
  'compaction.requested': StepCoordinates & { sessionId: string; modelId: string; usageInputTokens: number | null };
  'compaction.completed': StepCoordinates & { sessionId: string; modelId: string };
  'session.waiting': { continuationToken: ''; wait: 'next-user-message'; usage?: Usage };
  'session.completed': { usage?: Usage };
  'session.failed': ErrorDetails & { sessionId: string; usage?: Usage };
}

export type EveEventType = keyof EveEventDataMap;

/** An event before the journal gives it an envelope: what producers build. */
export type EveEventDraft = { [T in EveEventType]: { type: T; data: EveEventDataMap[T] } }[EveEventType];

/** Events after which the client's `result()` returns: the turn's boundary as Eve defines it. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<EveEventType> = new Set(['session.completed', 'session.failed']);

export function isTerminal(type: string): boolean {
  return TERMINAL_EVENT_TYPES.has(type as EveEventType);
}
