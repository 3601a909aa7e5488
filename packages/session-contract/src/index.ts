export { PRINCIPAL_TYPES, principalSchema, type Principal, type PrincipalType } from './principal.ts';
export { signInOutcome, type SignInFailure, type SignInOutcome } from './sign-in.ts';
export { TurnError } from './turn-error.ts';
export type {
  AgentDescription,
  AgentRuntime,
  AuthorizationChallengeInput,
  CompactionResult,
  ConnectionDescription,
  DirectToolOutcome,
  InputQuestion,
  PublishedTool,
  StepEnd,
  StepEventData,
  StepEventType,
  ToolDescription,
  TurnContext,
  UserFile,
  UserMessage,
} from './runtime.ts';
export {
  commandResults,
  dispatch,
  encodeCommand,
  inputResponse,
  messageInput,
  parseCommandResult,
  sessionCommand,
  turnPolicy,
} from './commands.ts';
export type { CommandHandlers, CommandKind, CommandOf, CommandResult, MessageInput, SessionBoundCommand, SessionCommand, TurnPolicy } from './commands.ts';
export { silentLogger, type Logger } from './logger.ts';
export { SessionTakenOverError, StoreUnavailableError, storeCall } from './store-errors.ts';
export { parseJson } from './json.ts';
export type { Channels } from './channels.ts';
export { DEFAULT_REDIS_PREFIX, RedisKeyspace } from './redis-keys.ts';
