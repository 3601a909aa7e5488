import type { Redis } from 'ioredis';
import { z } from 'zod';
import { DEFAULT_REDIS_PREFIX, parseJson, RedisKeyspace, signInOutcome, storeCall, type Channels } from '@eve-flue/session-contract';
import type { Sealer } from './sealer.ts';
import type { AuthStore, FlowBinding } from './store.ts';
import type { PendingFlow, RegisteredClient, SignInEvents, SignInOutcome, SubjectKey, TokenSet } from './types.ts';

/** Flows stay readable a little past their expiry, so a late callback is told it expired. */
const FLOW_GRACE_MS = 60_000;

const STORE = 'The sign-in store (Redis)';
const redisCall = <T>(command: () => Promise<T>) => storeCall(command, STORE);

/**
 * Sign-in storage on Redis, shared by every bridge instance; values sealed, flows expiring on
 * their own. An unreachable Redis is a StoreUnavailableError (503), as for the journal. The
 * client is the instance's shared command connection; its owner closes it.
 */
export class RedisAuthStore implements AuthStore {
  readonly #redis: Redis;
  readonly #sealer: Sealer;
  readonly #keys: RedisKeyspace;

  constructor(redis: Redis, sealer: Sealer, prefix = DEFAULT_REDIS_PREFIX) {
    this.#redis = redis;
    this.#sealer = sealer;
    this.#keys = new RedisKeyspace(prefix);
  }

  async getToken(subject: SubjectKey, connection: string): Promise<TokenSet | undefined> {
    return this.#get<TokenSet>(`token:${subject}:${connection}`);
  }

  async putToken(subject: SubjectKey, connection: string, tokens: TokenSet): Promise<void> {
    await redisCall(() => this.#redis.set(this.#key(`token:${subject}:${connection}`), this.#sealer.seal(tokens, `token:${subject}:${connection}`)));
  }

  async deleteToken(subject: SubjectKey, connection: string): Promise<void> {
    await redisCall(() => this.#redis.del(this.#key(`token:${subject}:${connection}`)));
  }

  async putFlow(flow: PendingFlow): Promise<void> {
    const ttl = Math.max(1, flow.expiresAt - Date.now() + FLOW_GRACE_MS);
    await redisCall(() => this.#redis.set(this.#key(`flow:${flow.id}`), this.#sealer.seal(flow, `flow:${flow.id}`), 'PX', ttl));
  }

  async getFlow(id: string): Promise<PendingFlow | undefined> {
    return this.#get<PendingFlow>(`flow:${id}`);
  }

  async bindFlow(id: string, bindingHash: string): Promise<FlowBinding> {
    const flow = await this.getFlow(id);
    if (!flow) return 'gone';
    if (flow.bindingHash) return 'owned';
    // The flow is sealed, so no script can test it: a marker key set only if absent elects the first browser.
    const ttl = Math.max(1, flow.expiresAt - Date.now() + FLOW_GRACE_MS);
    if ((await redisCall(() => this.#redis.set(this.#key(`flow-bound:${id}`), '1', 'PX', ttl, 'NX'))) !== 'OK') return 'owned';
    const done = await redisCall(() => this.#redis.set(this.#key(`flow:${id}`), this.#sealer.seal({ ...flow, bindingHash }, `flow:${id}`), 'KEEPTTL', 'XX'));
    return done === 'OK' ? 'bound' : 'gone';
  }

  async takeFlow(id: string): Promise<PendingFlow | undefined> {
    const sealed = await redisCall(() => this.#redis.getdel(this.#key(`flow:${id}`)));
    return sealed === null ? undefined : this.#sealer.openOrForget<PendingFlow>(sealed, `flow:${id}`);
  }

  async getClient(key: string): Promise<RegisteredClient | undefined> {
    return this.#get<RegisteredClient>(`client:${key}`);
  }

  async putClient(key: string, client: RegisteredClient): Promise<void> {
    await redisCall(() => this.#redis.set(this.#key(`client:${key}`), this.#sealer.seal(client, `client:${key}`)));
  }

  async close(): Promise<void> {}

  async #get<T>(suffix: string): Promise<T | undefined> {
    const sealed = await redisCall(() => this.#redis.get(this.#key(suffix)));
    return sealed === null ? undefined : this.#sealer.openOrForget<T>(sealed, suffix);
  }

  #key(suffix: string): string {
    return this.#keys.auth(suffix);
  }
}

/** Sign-in ends over Redis pub/sub: a callback on any instance resumes the turn parked on another. */
export class RedisSignInEvents implements SignInEvents {
  readonly #redis: Redis;
  readonly #channels: Channels;
  readonly #channel: string;
  readonly #listeners = new Set<(flowId: string, outcome: SignInOutcome) => void>();
  readonly #stopListening: () => void;

  /** `redis` publishes, `channels` hears: the instance's shared connections, closed by their owner. */
  constructor(redis: Redis, channels: Channels, prefix = DEFAULT_REDIS_PREFIX) {
    this.#redis = redis;
    this.#channels = channels;
    this.#channel = new RedisKeyspace(prefix).signInChannel;
    this.#stopListening = channels.listen(this.#channel, (message) => {
      // Only what another instance of this bridge could have published reaches a parked turn.
      const parsed = signInEnd.safeParse(parseJson(message));
      if (!parsed.success) return;
      for (const listener of this.#listeners) listener(parsed.data.flowId, parsed.data.outcome);
    });
  }

  /** Resolves once this instance hears sign-in ends; rejects with StoreUnavailableError when Redis cannot be reached. */
  async ready(): Promise<void> {
    await this.#channels.ready();
  }

  async publish(flowId: string, outcome: SignInOutcome): Promise<void> {
    await redisCall(() => this.#redis.publish(this.#channel, JSON.stringify({ flowId, outcome } satisfies z.input<typeof signInEnd>)));
  }

  subscribe(listener: (flowId: string, outcome: SignInOutcome) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#stopListening();
  }
}

/** A sign-in's end as it travels between instances. */
const signInEnd = z.strictObject({ flowId: z.string().min(1), outcome: signInOutcome });
