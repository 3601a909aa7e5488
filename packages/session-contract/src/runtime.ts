import type {
  EveEventDataMap,
  InputRequest,
  InputResolution,
  JsonObject,
} from '@eve-flue/eve-protocol';
import type { MessageInput } from './commands.ts';
import type { Principal } from './principal.ts';
import type { SignInOutcome } from './sign-in.ts';

/** A file the caller sent, with its bytes when they came inline. */
export type UserFile = MessageInput['files'][number];

/** One user message as the agent receives it. */
export type UserMessage = MessageInput & {
  deliveryId: string;
  principal: Principal | undefined;
};

type Coordinates = 'sequence' | 'turnId' | 'stepIndex';

/** Events a runtime may write during a step; the turn owns every other type. */
export type StepEventType =
  | 'reasoning.appended'
  | 'reasoning.completed'
  | 'message.appended'
  | 'message.completed'
  | 'action.input.appended'
  | 'actions.requested'
  | 'action.result'
  | 'result.completed';

export type StepEventData<T extends StepEventType> = Omit<EveEventDataMap[T], Coordinates>;

export interface StepEnd {
  finishReason: EveEventDataMap['step.completed']['finishReason'];
  usage?: EveEventDataMap['step.completed']['usage'];
}

/** A sign-in a turn parks on, as Eve's `authorization.required` shows it. */
export interface AuthorizationChallengeInput {
  /** The connection's name. */
  name: string;
  displayName: string;
  description: string;
  attemptId: string;
  /** The URL a person opens to sign in. */
  url: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** Where the provider sends the browser back: Eve's `webhookUrl`. */
  webhookUrl: string;
}


/** An input request as a runtime asks for it; the turn assigns the id. */
export type InputQuestion = Omit<InputRequest, 'requestId'>;

/**
 * The running turn as a runtime sees it. Every event it writes is stamped with the turn's
 * coordinates and delivery ids and journaled in call order.
 */
export interface TurnContext {
  readonly sessionId: string;
  readonly turnId: string;
  readonly sequence: number;
  /** Who sent the message this turn answers; undefined for anonymous callers. */
  readonly principal: Principal | undefined;
  /** Aborted when the turn is cancelled, cleared or reset. */
  readonly signal: AbortSignal;
  /** The current step's index, -1 before the first step. */
  readonly stepIndex: number;

  startStep(modelId: string): Promise<number>;
  emit<T extends StepEventType>(type: T, data: StepEventData<T>): Promise<void>;
  completeStep(end: StepEnd): Promise<void>;
  failStep(error: { code: string; message: string; details?: JsonObject }): Promise<void>;
  /** Parks the turn on human input (`input.requested` + `turn.waiting`) until it is answered. */
  requestInput(questions: readonly InputQuestion[]): Promise<InputResolution[]>;
  /**
   * Parks the turn on a sign-in (`authorization.required` + `turn.waiting`) until `result`
   * settles, or until the person moves on or the turn ends (then `declined`); reports the end
   * (`authorization.granted` + `authorization.completed`) and returns it.
   */
  awaitAuthorization(challenge: AuthorizationChallengeInput, result: Promise<SignInOutcome>): Promise<SignInOutcome>;
  /** Steering messages accepted since the last call, already on the stream as `message.received`. */
  takeSteering(): UserMessage[];
  /** Resolves when a steering message arrives (or the turn is aborted). */
  waitForSteering(): Promise<void>;
}

export interface ToolDescription {
  /** The name clients see in events: `connection__<server>__<tool>` for connection tools. */
  name: string;
  description: string;
  inputSchema?: unknown;
}

export interface ConnectionDescription {
  name: string;
  url: string;
  description: string;
  hasAuthorization: boolean;
}

export interface AgentDescription {
  name: string;
  modelId: string;
  modelProvider: string;
  tools: ToolDescription[];
  connections: ConnectionDescription[];
}

export interface CompactionResult {
  modelId: string;
  usageInputTokens?: number;
}

/** A tool a caller may run directly, outside any conversation (Eve's published tools). */
export interface PublishedTool {
  /** Its Eve name. */
  name: string;
  description?: string;
  /** JSON Schema of its arguments (an object). */
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

/** How a direct tool call ended, as Eve's `invokeTool` reports it. */
export type DirectToolOutcome =
  | { status: 'completed'; output: unknown; text: string }
  | { status: 'invalid-input'; message: string }
  | { status: 'denied'; reason: string }
  | { status: 'approval-required' }
  | { status: 'authorization-required'; connections: string[] }
  | { status: 'failed'; message: string };

/** The agent behind the session API. The Flue adapter is one; tests bring their own. */
export interface AgentRuntime {
  describe(): AgentDescription | Promise<AgentDescription>;
  /** Runs one user message to its end. Resolve when done; throw to fail the turn. */
  runTurn(turn: TurnContext, message: UserMessage): Promise<void>;
  clearContext(sessionId: string): Promise<void>;
  compactContext(sessionId: string): Promise<CompactionResult>;
  /** The session was reset or expired: drop what the runtime holds for it. */
  endSession?(sessionId: string): Promise<void>;
  /**
   * The session is idle (no turn, no stream): drop what is kept in memory for it. Its next turn
   * reloads it from the stores, as after a restart; the conversation must be intact.
   */
  evictSession?(sessionId: string): Promise<void>;
  /** A turn of this session was running when the last process stopped: stop anything left of it. */
  abandonTurn?(sessionId: string): Promise<void>;
  close?(): Promise<void>;
  /** The tools `principal` may run directly, with no model turn (with connections resolved per caller, from their set). */
  publishedTools?(principal: Principal | undefined): Promise<PublishedTool[]>;
  /** Runs a published tool for `principal`, with no model turn and no session; `signal` aborts when the caller goes away. */
  invokeTool?(name: string, input: Record<string, unknown>, principal: Principal | undefined, signal?: AbortSignal): Promise<DirectToolOutcome>;
}
