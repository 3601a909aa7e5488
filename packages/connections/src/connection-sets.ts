import type { Principal } from '@eve-flue/session-contract';
import { ConnectionDefinitionError, defineFlueConnection, hasSignIn, isDefinedConnection, type FlueConnectionDefinition } from './definition.ts';
import type { ConnectionRegistry } from './registry.ts';

/** Whom a connection set is resolved for: the caller and the Eve session (none for `GET /connections` without `?sessionId=`). */
export interface ConnectionSetContext {
  principal?: Principal;
  sessionId?: string;
}

/** The connections of one caller: each tenant or user gets their own servers. */
export type ConnectionSetResolver = (ctx: ConnectionSetContext) => readonly Readonly<FlueConnectionDefinition>[] | Promise<readonly Readonly<FlueConnectionDefinition>[]>;

/** Eve's rule for a connection name a resolver returns (`guides/dynamic-capabilities.md`). */
const EVE_CONNECTION_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** A resolver failed or returned something that cannot be mounted; the turn fails with this and the next message tries again. */
export class ConnectionSetError extends Error {
  override name = 'ConnectionSetError';
}

/**
 * The definitions a resolver returned, checked as `defineFlueConnection` checks them and by
 * Eve's rules for resolved connections: names of lowercase letters, digits and `-` (a letter
 * first, at most 64), each once; an `instanceKey` on every entry with a credential, naming the
 * account or tenant (it is part of the connection's identity).
 */
export function checkConnectionSet(resolved: unknown): readonly Readonly<FlueConnectionDefinition>[] {
  if (!Array.isArray(resolved)) throw new ConnectionSetError('[eve-flue] the connection resolver must return an array of connection definitions');
  const names = new Set<string>();
  return resolved.map((entry: Readonly<FlueConnectionDefinition>) => {
    let definition: Readonly<FlueConnectionDefinition>;
    try {
      // Already checked by its `define*` helper (an OpenAPI connection's only check is there).
      definition = isDefinedConnection(entry) ? entry : defineFlueConnection(entry);
    } catch (error) {
      throw new ConnectionSetError(error instanceof ConnectionDefinitionError ? error.message : '[eve-flue] the connection resolver returned an invalid definition');
    }
    const where = `[eve-flue] resolved connection "${definition.name}"`;
    if (!EVE_CONNECTION_NAME.test(definition.name)) throw new ConnectionSetError(`${where}: \`name\` must be lowercase letters, digits or \`-\`, starting with a letter, at most 64 characters`);
    if (names.has(definition.name)) throw new ConnectionSetError(`${where}: \`name\` is returned twice`);
    names.add(definition.name);
    if (hasSignIn(definition)) throw new ConnectionSetError(`${where}: sign-in connections (oauth2, connector) are declared in the config, not resolved per caller`);
    const authenticated = definition.auth !== undefined || Object.keys(definition.headers ?? {}).length > 0;
    if (authenticated && definition.instanceKey === undefined) throw new ConnectionSetError(`${where}: \`instanceKey\` is required on a connection with a credential (a stable account or tenant id)`);
    return definition;
  });
}

/**
 * How many sets no resident session holds are kept: those of callers with no session (a direct
 * tool call on the MCP channel, `GET /connections` without `?sessionId=`) and those asked for a
 * session no turn of which runs here (`GET /connections?sessionId=` naming any id). Each would
 * otherwise stay for good. Past it the least recently used is dropped and resolved again at its next call.
 */
export const UNHELD_SETS = 256;

/**
 * Connection sets resolved per caller: once per session and principal (the first turn of a
 * session, and again for a principal the session has not seen), and once per caller otherwise
 * while among the `UNHELD_SETS` most recent. A session's turns hold its sets (`hold`) until the
 * session ends or leaves memory (`forget`); the next turn after that resolves them again, as a
 * restart would. Each caller's set has a registry (listing, status), shared by that caller's sets
 * with the same identities: a later session does not list again, and does not wait for a server
 * the caller found unreachable. A registry lives as long as a set that uses it, so memory is
 * bounded by the resident sessions and that cap. A resolver that throws is not remembered: the
 * next message tries again.
 */
export class ConnectionSets {
  readonly #resolve: ConnectionSetResolver;
  readonly #registryFor: (definitions: readonly Readonly<FlueConnectionDefinition>[], ctx: ConnectionSetContext) => Promise<ConnectionRegistry>;
  readonly #sets = new Map<string, Promise<ConnectionRegistry>>();
  /** The registry key each resolved set uses. */
  readonly #registryKeys = new Map<string, string>();
  /** By caller and the identities of their set. */
  readonly #registries = new Map<string, Promise<ConnectionRegistry>>();
  /** How many sets use each registry. */
  readonly #registryUsers = new Map<string, number>();
  /** The sets each resident session's turns hold. */
  readonly #held = new Map<string, Set<string>>();
  /** The sets no session holds, least recently used first. */
  readonly #unheld = new Set<string>();

  constructor(resolve: ConnectionSetResolver, registryFor: (definitions: readonly Readonly<FlueConnectionDefinition>[], ctx: ConnectionSetContext) => Promise<ConnectionRegistry>) {
    this.#resolve = resolve;
    this.#registryFor = registryFor;
  }

  /** The caller's set, kept while among the most recent unless a turn of its session holds it. */
  for(ctx: ConnectionSetContext): Promise<ConnectionRegistry> {
    const key = setKey(ctx);
    if (!(ctx.sessionId !== undefined && this.#held.get(ctx.sessionId)?.has(key))) this.#touch(key);
    return this.#setOf(key, ctx);
  }

  /** The set a turn of `ctx.sessionId` runs with, kept until `forget(sessionId)`. */
  hold(ctx: ConnectionSetContext & { sessionId: string }): Promise<ConnectionRegistry> {
    const key = setKey(ctx);
    this.#unheld.delete(key);
    const held = this.#held.get(ctx.sessionId) ?? new Set<string>();
    this.#held.set(ctx.sessionId, held.add(key));
    return this.#setOf(key, ctx);
  }

  /** The session ended or left memory: the sets its turns held go, and the registries no other set uses. */
  forget(sessionId: string): void {
    const held = this.#held.get(sessionId);
    this.#held.delete(sessionId);
    for (const key of held ?? []) this.#drop(key);
  }

  #setOf(key: string, ctx: ConnectionSetContext): Promise<ConnectionRegistry> {
    const known = this.#sets.get(key);
    if (known) return known;
    const resolving: Promise<ConnectionRegistry> = Promise.resolve()
      .then(() => this.#resolve({ ...ctx }))
      .catch((error: unknown) => {
        // The resolver's own words stay in the log (its cause): they may name what a caller must not see.
        throw new ConnectionSetError('[eve-flue] the connection resolver failed', { cause: error });
      })
      .then((resolved) => this.#registryOf(key, resolving, checkConnectionSet(resolved), ctx));
    this.#sets.set(key, resolving);
    resolving.catch(() => {
      if (this.#sets.get(key) === resolving) this.#drop(key);
    });
    return resolving;
  }

  #registryOf(setKey: string, set: Promise<ConnectionRegistry>, definitions: readonly Readonly<FlueConnectionDefinition>[], ctx: ConnectionSetContext): Promise<ConnectionRegistry> {
    const caller = ctx.principal ? `principal:${ctx.principal.id}` : `session:${ctx.sessionId ?? ''}`;
    const key = JSON.stringify([caller, ...definitions.map(connectionIdentity)]);
    // Dropped while it resolved (its session ended, or the cap pushed it out): nothing keeps the registry.
    if (this.#sets.get(setKey) !== set) return this.#registries.get(key) ?? this.#registryFor(definitions, ctx);
    this.#registryKeys.set(setKey, key);
    this.#registryUsers.set(key, (this.#registryUsers.get(key) ?? 0) + 1);
    return this.#registries.get(key) ?? remembered(this.#registries, key, this.#registryFor(definitions, ctx));
  }

  /** Most recent now; the least recent past the cap is dropped. */
  #touch(key: string): void {
    this.#unheld.delete(key);
    this.#unheld.add(key);
    for (const oldest of this.#unheld) {
      if (this.#unheld.size <= UNHELD_SETS) break;
      this.#drop(oldest);
    }
  }

  #drop(setKey: string): void {
    this.#sets.delete(setKey);
    this.#unheld.delete(setKey);
    const registryKey = this.#registryKeys.get(setKey);
    if (registryKey === undefined) return;
    this.#registryKeys.delete(setKey);
    const users = (this.#registryUsers.get(registryKey) ?? 1) - 1;
    if (users > 0) this.#registryUsers.set(registryKey, users);
    else {
      this.#registryUsers.delete(registryKey);
      this.#registries.delete(registryKey);
    }
  }
}

function setKey(ctx: ConnectionSetContext): string {
  return `${ctx.sessionId ?? ''}\u0000${ctx.principal?.id ?? ''}`;
}

/** Keeps `value` under `key` unless it fails: a failure is tried again next time. */
function remembered<T>(map: Map<string, Promise<T>>, key: string, value: Promise<T>): Promise<T> {
  map.set(key, value);
  value.catch(() => {
    if (map.get(key) === value) map.delete(key);
  });
  return value;
}

/** A connection's identity across resolutions: its endpoint and instance key. */
export function connectionIdentity(definition: Pick<Readonly<FlueConnectionDefinition>, 'name' | 'url' | 'instanceKey'>): string {
  return JSON.stringify([definition.name, definition.url, definition.instanceKey ?? '']);
}
