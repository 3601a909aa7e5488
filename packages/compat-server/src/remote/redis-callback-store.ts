import { nanoid } from 'nanoid';
import { storeCall } from '../journal/errors.ts';
import type { RedisConnections } from '../redis/connections.ts';
import type { CallbackStore, CallerBinding, OwedCallbacks } from './callback-store.ts';
import { RedisScript } from '../redis/script.ts';

/** KEYS: owed, index. ARGV: session id, binding JSON. Adds the binding (replacing one for the same message). */
const BIND = new RedisScript(
  `
local owed
local stored = redis.call('GET', KEYS[1])
if stored then owed = cjson.decode(stored) else owed = { sessionId = ARGV[1], bindings = {}, deliveredThrough = -1, turnFrom = 0 } end
local binding = cjson.decode(ARGV[2])
local kept = {}
for _, b in ipairs(owed.bindings) do if b.deliveryId ~= binding.deliveryId then kept[#kept + 1] = b end end
kept[#kept + 1] = binding
owed.bindings = kept
redis.call('SET', KEYS[1], cjson.encode(owed))
redis.call('SADD', KEYS[2], ARGV[1])
`,
  2,
);

/** KEYS: owed. ARGV: delivered-through, turn-from. */
const ADVANCE = new RedisScript(
  `
local stored = redis.call('GET', KEYS[1])
if not stored then return 0 end
local owed = cjson.decode(stored)
owed.deliveredThrough = tonumber(ARGV[1])
owed.turnFrom = tonumber(ARGV[2])
redis.call('SET', KEYS[1], cjson.encode(owed))
return 1
`,
  1,
);

/** KEYS: claim. ARGV: holder, ttl ms. Takes a free claim or renews one's own. */
const CLAIM = new RedisScript(
  `
local holder = redis.call('GET', KEYS[1])
if not holder then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0
`,
  1,
);

/**
 * The ledger on Redis, shared by every instance: any of them can go on with a delivery another
 * one started. One instance delivers a session's callbacks at a time, holding a claim that lapses
 * `claimMs` after it was last renewed; when its instance dies, another takes it over.
 */
export class RedisCallbackStore implements CallbackStore {
  readonly shared = true;
  readonly #connections: RedisConnections;
  readonly #prefix: string;
  readonly #holder = `cb_${nanoid(10)}`;
  readonly #claimMs: number;

  constructor(connections: RedisConnections, { prefix = 'eve:', claimMs = 10_000 }: { prefix?: string; claimMs?: number } = {}) {
    this.#connections = connections;
    this.#prefix = prefix;
    this.#claimMs = claimMs;
  }

  #owed = (sessionId: string) => `${this.#prefix}cb:${sessionId}`;
  get #index() {
    return `${this.#prefix}cb-owed`;
  }

  async bind(sessionId: string, binding: CallerBinding): Promise<void> {
    await storeCall(() => BIND.run(this.#connections.commands, this.#owed(sessionId), this.#index, sessionId, JSON.stringify(binding)));
  }

  async get(sessionId: string): Promise<OwedCallbacks | undefined> {
    const stored = await storeCall(() => this.#connections.commands.get(this.#owed(sessionId)));
    return stored ? (JSON.parse(stored) as OwedCallbacks) : undefined;
  }

  async list(): Promise<OwedCallbacks[]> {
    const ids = await storeCall(() => this.#connections.commands.smembers(this.#index));
    if (ids.length === 0) return [];
    const stored = await storeCall(() => this.#connections.commands.mget(ids.map((id) => this.#owed(id))));
    return stored.filter((s): s is string => s !== null).map((s) => JSON.parse(s) as OwedCallbacks);
  }

  async advance(sessionId: string, deliveredThrough: number, turnFrom: number): Promise<void> {
    await storeCall(() => ADVANCE.run(this.#connections.commands, this.#owed(sessionId), String(deliveredThrough), String(turnFrom)));
  }

  async drop(sessionId: string): Promise<void> {
    await storeCall(() =>
      this.#connections.commands.multi().del(this.#owed(sessionId), this.#claim(sessionId)).srem(this.#index, sessionId).exec(),
    );
  }

  async claim(sessionId: string): Promise<boolean> {
    const held = await storeCall(() => CLAIM.run(this.#connections.commands, this.#claim(sessionId), this.#holder, String(this.#claimMs)));
    return held === 1;
  }

  /** The connections are the bridge's: it closes them. */
  async close(): Promise<void> {}

  #claim(sessionId: string): string {
    return `${this.#prefix}cb-claim:${sessionId}`;
  }
}
