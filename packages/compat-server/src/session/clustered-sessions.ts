import { dispatch, parseCommandResult, type CommandHandlers, type CommandKind, type CommandOf, type CommandResult, type SessionBoundCommand } from '@eve-flue/session-contract';
import type { Journal } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import { OwnerUnreachableError, type SessionCluster } from './cluster.ts';
import { RequestError } from './errors.ts';
import type { SessionManager } from './manager.ts';
import type { Sessions } from './sessions.ts';

/**
 * Sessions across several instances: a router. Each command runs on the instance that owns the
 * session (claiming it when nobody does); from elsewhere it is forwarded there, and the answer is
 * checked against the command's result schema. An instance that dies loses its leases; any other
 * then ends its running turns as interrupted and takes over.
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

  execute<K extends CommandKind>(command: CommandOf<K>): Promise<CommandResult<K>> {
    return dispatch(this.#handlers, command);
  }

  readonly #handlers: CommandHandlers = {
    // A new session has no owner yet: it is created here, and this instance takes it.
    create: async (command) => {
      const sessionId = await this.#local.execute(command);
      await this.#cluster.claim(sessionId);
      return sessionId;
    },
    send: (command) => this.#route(command),
    respond: (command) => this.#route(command),
    cancel: (command) => this.#route(command),
    clear: (command) => this.#route(command),
    compact: (command) => this.#route(command),
    reset: (command) => this.#route(command),
  };

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
  async #route<K extends SessionBoundCommand['kind']>(command: CommandOf<K>): Promise<CommandResult<K>> {
    for (;;) {
      const { owner, fresh } = await this.#cluster.claim(command.sessionId);
      if (owner === this.#cluster.instanceId) {
        if (fresh) {
          this.#local.forget(command.sessionId);
          await this.#local.recoverSession(command.sessionId);
        }
        return this.#runHere(command);
      }
      try {
        return parseCommandResult(command.kind, await this.#cluster.forward(owner, command));
      } catch (error) {
        // An owner that does not answer and no longer holds its lease is gone: claim and retry.
        if (!(error instanceof OwnerUnreachableError)) throw error;
        if (await this.#cluster.isHeld(command.sessionId)) throw new RequestError('service_unavailable', 'The instance running this session is not answering.');
      }
    }
  }

  /** An ended session needs no owner: its lease goes with it. */
  async #runHere<K extends SessionBoundCommand['kind']>(command: CommandOf<K>): Promise<CommandResult<K>> {
    const result = await this.#local.execute(command);
    if (command.kind === 'reset' && result === 'reset') await this.#cluster.release(command.sessionId);
    return result;
  }

  /** A command forwarded here: run it if this instance (still) owns the session. */
  async #serve(command: SessionBoundCommand): Promise<unknown> {
    const { owner } = await this.#cluster.claim(command.sessionId);
    if (owner !== this.#cluster.instanceId) throw new RequestError('service_unavailable', 'This session moved to another instance; try again.');
    return this.#runHere(command);
  }
}
