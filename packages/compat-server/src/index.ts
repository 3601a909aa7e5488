export { assertRouteAuth, createCompatServer, ConfigurationError, resolveMode } from './server.ts';
export type { CompatServer, CompatServerOptions, Mode } from './server.ts';
export type { ServerObserver, StreamSummary, StreamTransport, TurnOutcome } from './observer.ts';
export { bearerTokens, bearerToken, secretsEqual } from './auth/route-auth.ts';
export { principalOf } from './auth/middleware.ts';
export { RequestError } from './session/errors.ts';
export type { Principal, RouteAuth } from './auth/route-auth.ts';
export type { Journal, JournalLine, SessionRecord } from './journal/journal.ts';
export { MemoryJournal } from './journal/memory.ts';
export { SqliteJournal } from './journal/sqlite.ts';
export { followJournal } from './journal/follow.ts';
export type { Logger } from './logger.ts';
export { silentLogger } from './logger.ts';
export type {
  AgentDescription,
  AgentRuntime,
  AuthorizationChallengeInput,
  AuthorizationResult,
  CompactionResult,
  ConnectionDescription,
  InputQuestion,
  StepEventType,
  ToolDescription,
  TurnContext,
  UserFile,
  UserMessage,
} from './session/runtime.ts';
export type { SessionManager, TurnPolicy } from './session/manager.ts';
export type { Sessions } from './session/sessions.ts';
export type { SessionCluster, SessionCommand } from './session/cluster.ts';
export { OwnerUnreachableError } from './session/cluster.ts';
export { RedisSessionCluster } from './session/redis-cluster.ts';
export type { RedisClusterOptions } from './session/redis-cluster.ts';
export type { UploadPolicy } from './http/message.ts';
export { resolveLimits } from './http/limits.ts';
export { answerClientError } from './http/raw-response.ts';
export type { RequestLimits } from './http/limits.ts';
export type { SiteOptions } from './http/site.ts';
export type { StreamTimings } from './stream/ndjson-stream.ts';
export { resolveStreamPlan } from './stream/plan.ts';
export type { StreamAccess, StreamPlan } from './stream/plan.ts';
export {
  BEARER_PROTOCOL_PREFIX,
  DEFAULT_WEBSOCKET_LIMITS,
  isWebSocketUpgrade,
  SLOW_READER_CLOSE_CODE,
  TAIL_INDEX_CONTROL,
  WEBSOCKET_PROTOCOL,
} from './stream/websocket.ts';
export type { WebSocketStreamLimits } from './stream/websocket.ts';
export { RedisJournal } from './journal/redis.ts';
export type { RedisJournalOptions } from './journal/redis.ts';
export { SessionTakenOverError, StoreUnavailableError } from './journal/errors.ts';
