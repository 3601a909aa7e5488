import type { Redis } from 'ioredis';
import { envelope, type EveEvent, type EveEventDraft } from '@eve-flue/eve-protocol';
import { RedisKeyspace } from '@eve-flue/session-contract';
import type { RedisConnections } from '../redis/connections.ts';
import { RedisScript } from '../redis/script.ts';
import { SessionTakenOverError, storeCall } from './errors.ts';
import { serializeEvent, type AppendOptions, type Journal, type JournalLine, type SessionRecord, type TailListener } from './journal.ts';
import { TailListeners } from './listeners.ts';
import { RecentLines } from './recent-lines.ts';

/**
 * Appends a batch only if the stream still has the length the caller built it for, so that an
 * index is never assigned twice, and writes the session record in the same step. Entry ids are
 * `0-<index + 1>`: the stream id is the absolute stream index.
 * KEYS: stream, record, active set, ended set, session lease. ARGV: expected length (-1: any),
 * channel, record JSON ('' for none), active ('1'/'0'), ended-at ('' when open), session id,
 * the writing instance ('' to skip the check), then one line per event. Returns -2 when another
 * instance holds the session's lease: a writer that lost its session must not write to it.
 */
const APPEND = new RedisScript(
  `
if ARGV[7] ~= '' then
  local holder = redis.call('GET', KEYS[5])
  if holder and holder ~= ARGV[7] then return -2 end
end
local length = redis.call('XLEN', KEYS[1])
if ARGV[1] ~= '-1' and length ~= tonumber(ARGV[1]) then return -1 end
for i = 8, #ARGV do
  redis.call('XADD', KEYS[1], '0-' .. (length + i - 7), 'l', ARGV[i])
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3])
  if ARGV[4] == '1' then redis.call('SADD', KEYS[3], ARGV[6]) else redis.call('SREM', KEYS[3], ARGV[6]) end
  if ARGV[5] ~= '' then redis.call('ZADD', KEYS[4], ARGV[5], ARGV[6]) end
end
local tail = length + #ARGV - 8
if #ARGV >= 8 then redis.call('PUBLISH', ARGV[2], tail) end
return tail
`,
  5,
);

/**
 * Creates a session, or returns the open session that already owns the operation key.
 * KEYS: record, operation key. ARGV: record JSON, session id, records prefix.
 */
const CREATE = new RedisScript(
  `
if KEYS[2] ~= '' then
  local owner = redis.call('GET', KEYS[2])
  if owner then
    local existing = redis.call('GET', ARGV[3] .. owner)
    if existing and cjson.decode(existing)['status'] == 'open' then return existing end
  end
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`,
  2,
);

export interface RedisJournalOptions {
  /** Key prefix, so that several deployments (or tests) can share one Redis. Default `eve:`. */
  prefix?: string;
  /** In a cluster, the session leases (`RedisSessionCluster.fence`): appends are refused once another instance holds the session. */
  fence?: SessionFence;
}

/** Who this instance is, and where a session's lease lives: the one place that key is named. */
export interface SessionFence {
  holder: string;
  key(sessionId: string): string;
}


/**
 * Sessions on Redis, for several bridge instances: one Redis Stream per session (entry id =
 * stream index), session records as keys, live fan-out by pub/sub. Commands fail fast when
 * Redis is unreachable (no offline queue), surfacing as StoreUnavailableError.
 */
export class RedisJournal implements Journal {
  readonly pollIntervalMs = 1_000;
  readonly #redis: Redis;
  readonly #connections: RedisConnections;
  readonly #keys: RedisKeyspace;
  readonly #listeners = new TailListeners();
  readonly #recent = new RecentLines();
  /** Per session with listeners here: stops listening to its channel. */
  readonly #channels = new Map<string, () => void>();
  /** While any session has listeners here: stops hearing that the subscription connection dropped. */
  #stopLost: (() => void) | undefined;
  readonly #fence: SessionFence | undefined;
  /** Appends of this instance under way, per session, and the newest tail Redis announced meanwhile. */
  readonly #appending = new Map<string, number>();
  readonly #deferred = new Map<string, number>();

  constructor(connections: RedisConnections, options: RedisJournalOptions = {}) {
    this.#connections = connections;
    this.#redis = connections.commands;
    this.#keys = new RedisKeyspace(options.prefix);
    this.#fence = options.fence;
  }

  /** Resolves once the connections are ready; rejects with StoreUnavailableError when Redis cannot be reached. */
  async ready(): Promise<void> {
    await this.#connections.ready();
  }

  async createSession(record: SessionRecord, operationKey?: string): Promise<SessionRecord> {
    const stored = await storeCall(
      () =>
        CREATE.run(
          this.#redis,
          this.#keys.session(record.id),
          operationKey === undefined ? '' : this.#keys.operation(operationKey),
          JSON.stringify(record),
          record.id,
          this.#keys.sessionRecords,
        ) as Promise<string>,
    );
    return JSON.parse(stored) as SessionRecord;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const stored = await storeCall(() => this.#redis.get(this.#keys.session(sessionId)));
    return stored ? (JSON.parse(stored) as SessionRecord) : undefined;
  }

  async listInterrupted(): Promise<SessionRecord[]> {
    const ids = await storeCall(() => this.#redis.smembers(this.#keys.activeSessions));
    if (ids.length === 0) return [];
    const stored = await storeCall(() => this.#redis.mget(ids.map((id) => this.#keys.session(id))));
    return stored.filter((s): s is string => s !== null).map((s) => JSON.parse(s) as SessionRecord).filter((r) => r.activeTurn !== undefined);
  }

  async listEndedBefore(cutoff: number): Promise<string[]> {
    return storeCall(() => this.#redis.zrangebyscore(this.#keys.endedSessions, '-inf', `(${cutoff}`));
  }

  async dropEvents(sessionId: string): Promise<void> {
    const record = await this.getSession(sessionId);
    await storeCall(async () => {
      const multi = this.#redis.multi().del(this.#keys.events(sessionId)).zrem(this.#keys.endedSessions, sessionId);
      if (record) multi.set(this.#keys.session(sessionId), JSON.stringify({ ...record, eventsDropped: true }));
      await multi.exec();
    });
    this.#recent.forget(sessionId);
  }

  evict(sessionId: string): void {
    this.#recent.forget(sessionId);
  }

  async append(sessionId: string, drafts: readonly EveEventDraft[], options: AppendOptions = {}): Promise<EveEvent[]> {
    this.#appending.set(sessionId, (this.#appending.get(sessionId) ?? 0) + 1);
    try {
      // Where this instance's last append ended; the script refuses it if another writer moved on.
      let length = this.#recent.next(sessionId);
      for (;;) {
        length ??= await storeCall(() => this.#redis.xlen(this.#keys.events(sessionId)));
        const events = drafts.map((draft, i) => envelope(draft, length! + i, options.deliveryIds));
        const lines = events.map(serializeEvent);
        const tail = await this.#append(sessionId, lines, options.record, length);
        if (tail === -2) throw new SessionTakenOverError(`Another instance took session ${sessionId} over.`);
        if (tail === -1) {
          length = undefined; // another writer appended first: rebuild on the new length
          continue;
        }
        if (lines.length > 0) {
          this.#recent.push(sessionId, lines);
          this.#heard(sessionId, tail);
        }
        return events;
      }
    } finally {
      const count = this.#appending.get(sessionId)! - 1;
      if (count > 0) this.#appending.set(sessionId, count);
      else {
        this.#appending.delete(sessionId);
        const deferred = this.#deferred.get(sessionId);
        this.#deferred.delete(sessionId);
        if (deferred !== undefined) this.#listeners.notify(sessionId, deferred);
      }
    }
  }

  /**
   * An append notification, from Redis or from an append of this instance. While this instance
   * is appending to the session, Redis's word waits for the append to finish: its lines are then
   * in the recent lines, and readers here need not fetch them from Redis.
   */
  #heard(sessionId: string, tail: number): void {
    if (!this.#appending.has(sessionId)) return this.#listeners.notify(sessionId, tail);
    this.#deferred.set(sessionId, Math.max(tail, this.#deferred.get(sessionId) ?? -1));
  }

  async read(sessionId: string, from: number, limit: number): Promise<JournalLine[]> {
    const cached = this.#recent.read(sessionId, from, limit);
    if (cached && cached.length > 0) return cached;
    const entries = await storeCall(() => this.#redis.xrange(this.#keys.events(sessionId), `0-${from + 1}`, '+', 'COUNT', limit));
    return entries.map(([id, fields]) => {
      const line = fields[1]!;
      return { index: Number(id.split('-')[1]) - 1, type: typeOf(line), line };
    });
  }

  async tail(sessionId: string): Promise<number> {
    return (await storeCall(() => this.#redis.xlen(this.#keys.events(sessionId)))) - 1;
  }

  subscribe(sessionId: string, listener: TailListener): void {
    if (!this.#listeners.add(sessionId, listener)) return;
    const channel = this.#keys.appended(sessionId);
    this.#channels.set(sessionId, this.#connections.channels.listen(channel, (message) => this.#heard(sessionId, Number(message))));
    // Notifications missed while the connection is down cannot be replayed: followers must end.
    this.#stopLost ??= this.#connections.channels.onLost(() => this.#listeners.lost());
  }

  unsubscribe(sessionId: string, listener: TailListener): void {
    if (!this.#listeners.delete(sessionId, listener)) return;
    this.#channels.get(sessionId)?.();
    this.#channels.delete(sessionId);
    if (!this.#listeners.empty) return;
    this.#stopLost?.();
    this.#stopLost = undefined;
  }

  /** The connections belong to RedisConnections, closed by their owner. */
  async close(): Promise<void> {}

  async #append(sessionId: string, lines: readonly JournalLine[], record: SessionRecord | undefined, expectedLength: number): Promise<number> {
    const result = await storeCall(
      () =>
        APPEND.run(
          this.#redis,
          this.#keys.events(sessionId),
          this.#keys.session(sessionId),
          this.#keys.activeSessions,
          this.#keys.endedSessions,
          // Unfenced, the lease key is never read: any key of the session stands in.
          this.#fence?.key(sessionId) ?? this.#keys.session(sessionId),
          String(expectedLength),
          this.#keys.appended(sessionId),
          record ? JSON.stringify(record) : '',
          record?.activeTurn ? '1' : '0',
          record?.status === 'ended' ? String(record.endedAt) : '',
          sessionId,
          this.#fence?.holder ?? '',
          ...lines.map((l) => l.line),
        ) as Promise<number>,
    );
    return Number(result);
  }


}

function typeOf(line: string): string {
  return /^\{"type":"([^"]+)"/.exec(line)?.[1] ?? '';
}
