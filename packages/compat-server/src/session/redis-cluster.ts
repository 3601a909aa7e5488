import type { Redis } from 'ioredis';
import { nanoid } from 'nanoid';
import { z } from 'zod';
import { isErrorCode, type ErrorCode } from '@eve-flue/eve-protocol';
import { encodeCommand, parseJson, RedisKeyspace, sessionCommand, type SessionBoundCommand } from '@eve-flue/session-contract';
import { storeCall } from '../journal/errors.ts';
import type { RedisConnections } from '../redis/connections.ts';
import { OwnerUnreachableError, type ForwardedRefusal, type SessionCluster } from './cluster.ts';
import { RequestError } from './errors.ts';
import { RedisScript } from '../redis/script.ts';

/** Sets the lease if it is free or already ours. KEYS: lease. ARGV: instance id, ttl ms. */
const CLAIM = new RedisScript(
  `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if holder then return '=' .. ARGV[1] end
return '+' .. ARGV[1]
`,
  1,
);

/** Renews or drops a lease only while it is ours. KEYS: lease. ARGV: instance id, ttl ms ('0' drops). */
const RENEW = new RedisScript(
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`,
  1,
);

export interface RedisClusterOptions {
  prefix?: string;
  /** How long a lease outlives its last renewal: the bound on noticing a dead owner. Default 3 s. */
  leaseMs?: number;
  /** How long to wait for an owner's answer. Default 10 s. */
  forwardTimeoutMs?: number;
}

/** What travels between instances, checked on arrival: a command (checked by its own schema) or a reply. */
const envelopeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('command'), id: z.string().min(1), from: z.string().min(1), command: z.unknown() }),
  z.object({
    type: z.literal('reply'),
    reply: z.discriminatedUnion('ok', [
      z.object({ id: z.string().min(1), ok: z.literal(true), value: z.unknown() }),
      z.object({
        id: z.string().min(1),
        ok: z.literal(false),
        refusal: z.object({ code: z.custom<ErrorCode>((code) => typeof code === 'string' && isErrorCode(code)), message: z.string() }),
      }),
    ]),
  }),
]);
type Envelope = z.input<typeof envelopeSchema>;
type Reply = Extract<Envelope, { type: 'reply' }>['reply'];

/** Session ownership by Redis leases, and command forwarding by Redis pub/sub. */
export class RedisSessionCluster implements SessionCluster {
  readonly instanceId = `ins_${nanoid(10)}`;
  readonly #redis: Redis;
  readonly #connections: RedisConnections;
  readonly #stopListening: () => void;
  readonly #keys: RedisKeyspace;
  readonly #leaseMs: number;
  readonly #forwardTimeoutMs: number;
  readonly #held = new Set<string>();
  readonly #pending = new Map<string, (reply: Reply) => void>();
  readonly #renewal: NodeJS.Timeout;
  #handler: ((command: SessionBoundCommand) => Promise<unknown>) | undefined;

  constructor(connections: RedisConnections, options: RedisClusterOptions = {}) {
    this.#connections = connections;
    this.#redis = connections.commands;
    this.#keys = new RedisKeyspace(options.prefix);
    this.#leaseMs = options.leaseMs ?? 3_000;
    this.#forwardTimeoutMs = options.forwardTimeoutMs ?? 10_000;
    this.#stopListening = connections.channels.listen(this.#inbox(this.instanceId), (message) => void this.#receive(message));
    this.#renewal = setInterval(() => void this.#renew(), Math.floor(this.#leaseMs / 3));
    this.#renewal.unref();
  }

  /**
   * What a journal on the same Redis checks before each append: the key of the session's lease
   * and this instance's id, so that an instance that lost a session cannot write to it.
   */
  get fence(): { holder: string; key: (sessionId: string) => string } {
    return { holder: this.instanceId, key: (sessionId) => this.#lease(sessionId) };
  }

  /** Resolves once this instance can receive forwarded commands; rejects with StoreUnavailableError when Redis cannot be reached. */
  async ready(): Promise<void> {
    await this.#connections.ready();
  }

  async claim(sessionId: string): Promise<{ owner: string; fresh: boolean }> {
    const answer = String(await storeCall(() => CLAIM.run(this.#redis, this.#lease(sessionId), this.instanceId, String(this.#leaseMs))));
    if (answer.startsWith('+') || answer.startsWith('=')) {
      const fresh = answer.startsWith('+') || !this.#held.has(sessionId);
      this.#held.add(sessionId);
      return { owner: this.instanceId, fresh };
    }
    this.#held.delete(sessionId);
    return { owner: answer, fresh: false };
  }

  holds(sessionId: string): boolean {
    return this.#held.has(sessionId);
  }

  async release(sessionId: string): Promise<void> {
    this.#held.delete(sessionId);
    await storeCall(() => RENEW.run(this.#redis, this.#lease(sessionId), this.instanceId, '0'));
  }

  async isHeld(sessionId: string): Promise<boolean> {
    return (await storeCall(() => this.#redis.exists(this.#lease(sessionId)))) === 1;
  }

  async forward(owner: string, command: SessionBoundCommand): Promise<unknown> {
    const id = nanoid();
    const envelope: Envelope = { type: 'command', id, from: this.instanceId, command: encodeCommand(command) };
    let settle!: (reply: Reply) => void;
    const reply = new Promise<Reply>((resolve) => (settle = resolve));
    this.#pending.set(id, settle);
    let timer: NodeJS.Timeout | undefined;
    try {
      await storeCall(() => this.#redis.publish(this.#inbox(owner), JSON.stringify(envelope)));
      const answer = await Promise.race([
        reply,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new OwnerUnreachableError(`The instance running session ${command.sessionId} did not answer.`)), this.#forwardTimeoutMs);
        }),
      ]);
      if (answer.ok) return answer.value;
      throw new RequestError(answer.refusal.code, answer.refusal.message);
    } finally {
      clearTimeout(timer);
      this.#pending.delete(id);
    }
  }

  serve(handler: (command: SessionBoundCommand) => Promise<unknown>): void {
    this.#handler = handler;
  }

  async close(): Promise<void> {
    clearInterval(this.#renewal);
    await Promise.allSettled([...this.#held].map((sessionId) => this.release(sessionId)));
    this.#stopListening();
  }

  async #receive(message: string): Promise<void> {
    const parsed = envelopeSchema.safeParse(parseJson(message));
    // Another instance's bug (or another program on this channel) must not reach the sessions.
    if (!parsed.success) return;
    const envelope = parsed.data;
    if (envelope.type === 'reply') {
      this.#pending.get(envelope.reply.id)?.(envelope.reply);
      this.#pending.delete(envelope.reply.id);
      return;
    }
    let reply: Reply;
    try {
      const command = sessionCommand.parse(envelope.command);
      if (command.kind === 'create') throw new RequestError('invalid_request', 'A new session is created where it is asked for.');
      reply = { id: envelope.id, ok: true, value: (await this.#handler?.(command)) ?? null };
    } catch (error) {
      const refusal: ForwardedRefusal =
        error instanceof RequestError
          ? { code: error.code, message: error.message }
          : { code: 'service_unavailable', message: 'The instance running this session could not handle the request.' };
      reply = { id: envelope.id, ok: false, refusal };
    }
    await this.#redis.publish(this.#inbox(envelope.from), JSON.stringify({ type: 'reply', reply } satisfies Envelope)).catch(() => undefined);
  }

  async #renew(): Promise<void> {
    const held = [...this.#held];
    if (held.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const sessionId of held) pipeline.eval(RENEW.lua, 1, this.#lease(sessionId), this.instanceId, String(this.#leaseMs));
    const results = await pipeline.exec().catch(() => null);
    results?.forEach(([error, kept], i) => {
      if (!error && kept === 0) this.#held.delete(held[i]!);
    });
  }

  #lease(sessionId: string): string {
    return this.#keys.owner(sessionId);
  }

  #inbox(instanceId: string): string {
    return this.#keys.inbox(instanceId);
  }

}
