/** A deployment's default key prefix on Redis: every key and channel it uses starts with it. */
export const DEFAULT_REDIS_PREFIX = 'eve:';

/**
 * Every key and channel a deployment uses on Redis, under its prefix, in one place: which family
 * lives where, whichever package's store reads or writes it. Flue's own keys live under `flue`
 * (their layout: `@eve-flue/flue-redis`'s `Keys`).
 */
export class RedisKeyspace {
  readonly prefix: string;

  constructor(prefix: string = DEFAULT_REDIS_PREFIX) {
    this.prefix = prefix;
  }

  /** String (JSON): a session's record. The journal's Lua script builds these from `sessionRecords`. */
  session(sessionId: string): string {
    return `${this.sessionRecords}${sessionId}`;
  }
  get sessionRecords(): string {
    return `${this.prefix}s:`;
  }
  /** String: the session an idempotent create (`operationId`) made. */
  operation(operationKey: string): string {
    return `${this.prefix}op:${operationKey}`;
  }
  /** Stream: a session's events, entry id = stream index. */
  events(sessionId: string): string {
    return `${this.prefix}e:${sessionId}`;
  }
  /** Set: sessions whose turn is running. */
  get activeSessions(): string {
    return `${this.prefix}active`;
  }
  /** Sorted set (score: end time): ended sessions, for the retention sweep. */
  get endedSessions(): string {
    return `${this.prefix}ended`;
  }
  /** Channel: a session's appends, for its followers on every instance. */
  appended(sessionId: string): string {
    return `${this.prefix}appended:${sessionId}`;
  }
  /** String with a TTL: the instance holding a session's lease. */
  owner(sessionId: string): string {
    return `${this.prefix}owner:${sessionId}`;
  }
  /** Channel: commands forwarded to one instance. */
  inbox(instanceId: string): string {
    return `${this.prefix}inbox:${instanceId}`;
  }
  /** Sealed strings of the sign-in store: `token:…`, `flow:…`, `flow-bound:…`, `client:…`. */
  auth(suffix: string): string {
    return `${this.prefix}auth:${suffix}`;
  }
  /** Channel: the end of a sign-in, for the instance whose turn is parked on it. */
  get signInChannel(): string {
    return `${this.prefix}signin`;
  }
  /** The prefix of Flue's conversations (`redisFlueDb`). */
  get flue(): string {
    return `${this.prefix}flue:`;
  }
  /** Hash: which Flue instance holds each session. */
  get generations(): string {
    return `${this.flue}generations`;
  }
}
