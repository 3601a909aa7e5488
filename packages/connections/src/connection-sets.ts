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
 * How many callers with no session (a direct tool call on the MCP channel, `GET /connections`
 * without `?sessionId=`) keep their set: each principal would otherwise leave one behind for
 * good. Past it the least recently used is dropped and resolved again at its next call.
 */
export const SESSIONLESS_SETS = 256;

/**
 * Connection sets resolved per caller: once per session and principal (the first turn of a
 * session, and again for a principal the session has not seen), and once per caller with no
 * session while they are among the `SESSIONLESS_SETS` most recent. Each caller's set has a
 * registry (listing, status), shared by that caller's sets with the same identities: a later
 * session does not list again, and does not wait for a server the caller found unreachable. A
 * registry lives as long as a set that uses it, so memory is bounded by the live sessions and
 * that cap. A resolver that throws is not remembered: the next message tries again.
 */
export class ConnectionSets {
  readonly #resolve: ConnectionSetResolver;
  readonly #registryFor: (definitions: readonly Readonly<FlueConnectionDefinition>[], ctx: ConnectionSetContext) => Promise<ConnectionRegistry>;
  readonly #sets = new Map<string, Promise<ConnectionRegistry>>();
  /** The registry key each resolved set uses. */
  readonly #registryKeys = new Map<string, string>();
  /** By caller and the identities of their set. */
  readonly #registries = new Map<string, Promise<ConnectionRegistry>>();
  /** The sets of callers with no session, least recently used first. */
  readonly #sessionless = new Set<string>();

  constructor(resolve: ConnectionSetResolver, registryFor: (definitions: readonly Readonly<FlueConnectionDefinition>[], ctx: ConnectionSetContext) => Promise<ConnectionRegistry>) {
    this.#resolve = resolve;
    this.#registryFor = registryFor;
  }

  for(ctx: ConnectionSetContext): Promise<ConnectionRegistry> {
    const key = `${ctx.sessionId ?? ''}\u0000${ctx.principal?.id ?? ''}`;
    if (ctx.sessionId === undefined) this.#touch(key);
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
    const known = this.#registries.get(key);
    if (known) {
      if (this.#sets.get(setKey) === set) this.#registryKeys.set(setKey, key);
      return known;
    }
    const registry = this.#registryFor(definitions, ctx);
    // Dropped while it resolved (its session ended, or the cap pushed it out): nothing keeps the registry.
    if (this.#sets.get(setKey) !== set) return registry;
    this.#registryKeys.set(setKey, key);
    return remembered(this.#registries, key, registry);
  }

  /** The session ended: its sets go with it, and the registries no other set uses. */
  forget(sessionId: string): void {
    for (const key of [...this.#sets.keys()]) if (key.startsWith(`${sessionId}\u0000`)) this.#drop(key);
  }

  /** A caller with no session called: most recent now; the least recent past the cap is dropped. */
  #touch(key: string): void {
    this.#sessionless.delete(key);
    this.#sessionless.add(key);
    for (const oldest of this.#sessionless) {
      if (this.#sessionless.size <= SESSIONLESS_SETS) break;
      this.#drop(oldest);
    }
  }

  #drop(setKey: string): void {
    this.#sets.delete(setKey);
    this.#sessionless.delete(setKey);
    const registryKey = this.#registryKeys.get(setKey);
    this.#registryKeys.delete(setKey);
    if (registryKey !== undefined && ![...this.#registryKeys.values()].includes(registryKey)) this.#registries.delete(registryKey);
  }
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
