import type { InputResponse } from '@eve-flue/eve-protocol';
import type { Principal } from '../auth/route-auth.ts';
import type { Journal } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import { OwnerUnreachableError, type SessionCluster, type SessionCommand, type WireMessage } from './cluster.ts';
import { RequestError } from './errors.ts';
import { newDeliveryId } from './ids.ts';
import type { MessageInput, SessionManager, TurnPolicy } from './manager.ts';
import type { Sessions } from './sessions.ts';

/**
 * Sessions across several instances. Each command runs on the instance that owns the session
 * (claiming it when nobody does); from elsewhere it is forwarded there. An instance that dies
 * loses its leases; any other then ends its running turns as interrupted and takes over.
 */
export class ClusteredSessions implements Sessions {
  readonly #local: SessionManager;
  readonly #cluster: SessionCluster;
  readonly #journal: Journal;
  readonly #logger: Logger;
  readonly #sweeper: NodeJS.Timeout;

  constructor(local: SessionManager, cluster: SessionCluster, journal: Journal, logger: Logger, sweepMs: number) {
    this.#local = local;
    this.#cluster = cluster;
    this.#journal = journal;
    this.#logger = logger;
    cluster.serve((command) => this.#serve(command));
    // An owner holds a session only while it works on it: idle sessions go back to the pool.
    local.whenIdle((sessionId) => {
      cluster.release(sessionId).catch((error: unknown) => logger.warn({ err: error, sessionId }, 'could not release a session lease'));
    });
    this.#sweeper = setInterval(() => {
      this.recoverInterruptedTurns().catch((error: unknown) => logger.warn({ err: error }, 'could not look for orphaned sessions'));
    }, sweepMs);
    this.#sweeper.unref();
  }

  async create(principal: Principal | undefined, input: MessageInput | undefined, operationId?: string): Promise<string> {
    const sessionId = await this.#local.create(principal, input, operationId);
    await this.#cluster.claim(sessionId);
    return sessionId;
  }

  async send(sessionId: string, principal: Principal | undefined, input: MessageInput, policy: TurnPolicy): Promise<string> {
    const deliveryId = newDeliveryId();
    const command: SessionCommand = { kind: 'send', sessionId, input: toWire(input), policy, deliveryId, ...(principal ? { principal } : {}) };
    await this.#route(command, () => this.#local.send(sessionId, principal, input, policy, deliveryId));
    return deliveryId;
  }

  respond(sessionId: string, responses: readonly InputResponse[]): Promise<string> {
    return this.#route({ kind: 'respond', sessionId, responses: [...responses] }, () => this.#local.respond(sessionId, responses));
  }

  cancel(sessionId: string, turnId?: string): Promise<'accepted' | 'no_active_turn'> {
    return this.#route({ kind: 'cancel', sessionId, ...(turnId ? { turnId } : {}) }, () => this.#local.cancel(sessionId, turnId));
  }

  clear(sessionId: string): Promise<'accepted' | 'no_active_session'> {
    return this.#route({ kind: 'clear', sessionId }, () => this.#local.clear(sessionId));
  }

  compact(sessionId: string): Promise<'accepted' | 'no_active_session'> {
    return this.#route({ kind: 'compact', sessionId }, () => this.#local.compact(sessionId));
  }

  reset(sessionId: string): Promise<'reset' | 'no_active_session'> {
    return this.#route({ kind: 'reset', sessionId }, () => this.#resetHere(sessionId));
  }

  /** An ended session needs no owner: its lease goes with it. */
  async #resetHere(sessionId: string): Promise<'reset' | 'no_active_session'> {
    const status = await this.#local.reset(sessionId);
    if (status === 'reset') await this.#cluster.release(sessionId);
    return status;
  }

  streamAccess(sessionId: string): Promise<'ok' | 'not_found' | 'expired'> {
    return this.#local.streamAccess(sessionId);
  }

  /** Ends the running turns of sessions nobody holds any more (their instance died), taking them over. */
  async recoverInterruptedTurns(): Promise<number> {
    let recovered = 0;
    for (const record of await this.#journal.listInterrupted()) {
      if (await this.#cluster.isHeld(record.id)) continue;
      const { owner } = await this.#cluster.claim(record.id);
      if (owner !== this.#cluster.instanceId) continue;
      if (await this.#local.recoverSession(record.id)) recovered += 1;
    }
    if (recovered > 0) this.#logger.warn({ recovered, instance: this.#cluster.instanceId }, 'took over sessions whose instance stopped');
    return recovered;
  }

  sweepExpired(): Promise<number> {
    return this.#local.sweepExpired();
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.#local.close();
    await this.#cluster.close();
  }

  /** Runs a command where the session is owned: here (claiming it if free), or forwarded there. */
  async #route<T>(command: SessionCommand, here: () => Promise<T>): Promise<T> {
    for (;;) {
      const { owner, fresh } = await this.#cluster.claim(command.sessionId);
      if (owner === this.#cluster.instanceId) {
        if (fresh) {
          this.#local.forget(command.sessionId);
          await this.#local.recoverSession(command.sessionId);
        }
        return here();
      }
      try {
        return (await this.#cluster.forward(owner, command)) as T;
      } catch (error) {
        // An owner that does not answer and no longer holds its lease is gone: claim and retry.
        if (!(error instanceof OwnerUnreachableError) || (await this.#cluster.isHeld(command.sessionId))) {
          if (error instanceof OwnerUnreachableError) throw new RequestError(503, 'service_unavailable', 'The instance running this session is not answering.');
          throw error;
        }
      }
    }
  }

  /** A command forwarded here: run it if this instance (still) owns the session. */
  async #serve(command: SessionCommand): Promise<unknown> {
    const { owner } = await this.#cluster.claim(command.sessionId);
    if (owner !== this.#cluster.instanceId) throw new RequestError(503, 'service_unavailable', 'This session moved to another instance; try again.');
    switch (command.kind) {
      case 'send':
        return this.#local.send(command.sessionId, command.principal, fromWire(command.input), command.policy, command.deliveryId);
      case 'respond':
        return this.#local.respond(command.sessionId, command.responses);
      case 'cancel':
        return this.#local.cancel(command.sessionId, command.turnId);
      case 'clear':
        return this.#local.clear(command.sessionId);
      case 'compact':
        return this.#local.compact(command.sessionId);
      case 'reset':
        return this.#resetHere(command.sessionId);
    }
  }
}

function toWire(input: MessageInput): WireMessage {
  return {
    text: input.text,
    parts: input.parts,
    files: input.files.map((file) => ({
      mediaType: file.mediaType,
      ...(file.filename !== undefined ? { filename: file.filename } : {}),
      ...(file.data ? { base64: Buffer.from(file.data).toString('base64') } : {}),
      ...(file.url !== undefined ? { url: file.url } : {}),
    })),
    ...(input.clientContext !== undefined ? { clientContext: input.clientContext } : {}),
  };
}

function fromWire(wire: WireMessage): MessageInput {
  return {
    text: wire.text,
    parts: wire.parts as MessageInput['parts'],
    files: wire.files.map((file) => ({
      mediaType: file.mediaType,
      ...(file.filename !== undefined ? { filename: file.filename } : {}),
      ...(file.base64 !== undefined ? { data: Buffer.from(file.base64, 'base64') } : {}),
      ...(file.url !== undefined ? { url: file.url } : {}),
    })),
    ...(wire.clientContext !== undefined ? { clientContext: wire.clientContext } : {}),
  };
}
