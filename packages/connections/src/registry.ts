import { CredentialError, hasCallerCredential, hasStaticCredential } from './credentials.ts';
import { describeFailure, failureStatus } from './failure.ts';
import { hasSignIn, type FlueConnectionDefinition } from './definition.ts';
import { listServerTools, type ListedTool, type ServerListing } from './listing.ts';
import { ToolNameCollisionError, ToolNameMap, type DeclaredTools, type ToolOrigin } from './naming.ts';

export type ConnectionState = 'ready' | 'needs_sign_in' | 'error';

export interface ConnectionStatus {
  name: string;
  state: ConnectionState;
  /** Eve names of the tools the agent gets from this connection. */
  tools: string[];
  /** One line per thing the connection is missing (a ready one may still name tools it cannot offer). */
  missing: string[];
}

interface Entry {
  definition: Readonly<FlueConnectionDefinition>;
  listed?: ListedTool[];
  listing?: ServerListing;
  /** What the last listing found. */
  state: ConnectionState;
  missing: string[];
  /** Why the server could not be used since (it stands until the server answers again). */
  failure?: Failure;
  /** Setup the operator still owes (e.g. a sign-in backend that is not configured). */
  setup?: string;
  /** Why this connection is not mounted: its tool names collide with an earlier connection's. */
  collision?: string;
}

interface Failure {
  state: ConnectionState;
  line: string;
  /** The server could not be reached (down, hung): turns do not wait for it. */
  unreachable: boolean;
}

/** What one caller met, for a connection whose credential is resolved per caller. */
export type CallerOutcome = { state: 'ready'; tools?: string[] } | { state: 'refused'; status: number };

/**
 * The declared connections, what each offers, and what each is missing. The tool-name map is
 * rebuilt from every listing, so names always map forward from what servers declare.
 */
export class ConnectionRegistry {
  readonly #entries: Map<string, Entry>;
  readonly #fetchFor: (definition: Readonly<FlueConnectionDefinition>) => typeof fetch;
  #names = new ToolNameMap();
  /** Per connection with a per-caller credential: what each principal's requests last met. */
  readonly #callers = new Map<string, Map<string, CallerOutcome>>();

  constructor(definitions: readonly Readonly<FlueConnectionDefinition>[], fetchFor: (definition: Readonly<FlueConnectionDefinition>) => typeof fetch) {
    this.#entries = new Map();
    for (const definition of definitions) {
      if (this.#entries.has(definition.name)) throw new Error(`[eve-flue] connection "${definition.name}" is declared twice`);
      this.#entries.set(definition.name, { definition, state: 'error', missing: ['not checked yet'] });
    }
    this.#fetchFor = fetchFor;
  }

  get names(): ToolNameMap {
    return this.#names;
  }

  definition(name: string): Readonly<FlueConnectionDefinition> {
    const entry = this.#entries.get(name);
    if (!entry) throw new Error(`[eve-flue] no connection named "${name}"`);
    return entry.definition;
  }

  definitions(): Readonly<FlueConnectionDefinition>[] {
    return [...this.#entries.values()].map((e) => e.definition);
  }

  /** Connections safe to mount: every one but those whose tool names collide with another's. */
  mountable(): Readonly<FlueConnectionDefinition>[] {
    return [...this.#entries.values()].filter((e) => !e.collision).map((e) => e.definition);
  }

  /** Lists every connection's tools again and updates states and the name map. */
  async refresh(): Promise<ConnectionStatus[]> {
    await Promise.all([...this.#entries.values()].map((entry) => this.#list(entry)));
    this.#rebuildNames();
    return this.status();
  }

  /**
   * Lists one connection's tools again through `fetch` (e.g. carrying a token just granted, for a
   * server that lists its tools only to signed-in callers) and updates the name map.
   */
  async relist(name: string, fetch: typeof globalThis.fetch): Promise<void> {
    const entry = this.#entries.get(name);
    if (!entry) return;
    await this.#list(entry, fetch);
    this.#rebuildNames();
  }

  async #list(entry: Entry, fetch = this.#fetchFor(entry.definition)): Promise<void> {
    try {
      const listing = await listServerTools(entry.definition.url, fetch);
      const listed = listing.tools;
      entry.listed = listed;
      entry.listing = listing;
      delete entry.failure;
      const offered = new Set(listed.map((t) => t.name));
      const absent = (entry.definition.tools ?? []).filter((t) => !offered.has(t));
      const taskOnly = listed.filter((t) => t.taskOnly).map((t) => t.name);
      // Flue refuses an allowlist that names a task-only tool: the connection cannot be mounted.
      const unmountable = absent.length > 0 || (entry.definition.tools ?? []).some((t) => taskOnly.includes(t));
      entry.state = unmountable ? 'error' : 'ready';
      entry.missing = [
        ...absent.map((t) => `the server does not offer the allowlisted tool "${t}"`),
        ...taskOnly.map((t) => `tool "${t}" is not offered: it runs only as an MCP task (execution.taskSupport "required"), which Flue cannot call`),
      ];
    } catch (error) {
      if (failureStatus(error) === 401) {
        const refusal = refusalOf(entry.definition);
        entry.state = refusal.state;
        entry.missing = [refusal.missing];
        delete entry.failure;
        return;
      }
      if (error instanceof CredentialError) {
        entry.state = 'error';
        entry.missing = [`${error.message.replace(/^\[eve-flue\] /, '')}: its tools are listed at the first turn that has one`];
        delete entry.failure;
        return;
      }
      this.markUnavailable(entry.definition.name, describeFailure(error));
    }
  }

  /** Records that a connection could not be used (from a listing or from the agent runtime). */
  markUnavailable(name: string, reason: string): void {
    this.#fail(name, { state: 'error', line: `the server is unavailable: ${reason}`, unreachable: true });
  }

  /** Records that the server refused the connection's own credential (or wants one): the same line as at startup. */
  markRefused(name: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    const refusal = refusalOf(entry.definition);
    this.#fail(name, { state: refusal.state, line: refusal.missing, unreachable: false });
  }

  /** Records that the server answered again: what its listing found stands. */
  markReachable(name: string): void {
    const entry = this.#entries.get(name);
    if (entry) delete entry.failure;
  }

  /** Whether the last attempt to reach the connection's server failed. */
  isUnavailable(name: string): boolean {
    return this.#entries.get(name)?.failure?.unreachable === true;
  }

  #fail(name: string, failure: Failure): void {
    const entry = this.#entries.get(name);
    if (entry) entry.failure = failure;
  }

  /**
   * What the server listed, for a connection nobody signs in to: enough for an MCP client to open
   * without contacting the server (what a server shows signed-in people is theirs alone).
   */
  listing(name: string): ServerListing | undefined {
    const entry = this.#entries.get(name);
    return entry && !hasSignIn(entry.definition) ? entry.listing : undefined;
  }

  /** Records that a sign-in could not even start (e.g. the server's metadata names another resource). */
  markSignInFailed(name: string, reason: string): void {
    this.#fail(name, { state: 'error', line: `sign-in refused: ${reason}`, unreachable: false });
  }

  /** Records setup a connection lacks before anyone can sign in to it; it stays until restart. */
  requireSetup(name: string, missing: string): void {
    const entry = this.#entries.get(name);
    if (entry) entry.setup = missing;
  }

  /** Records what a caller's requests met, for a connection whose credential is resolved per caller (others: ignored). */
  recordCaller(name: string, principal: string, outcome: CallerOutcome): void {
    const entry = this.#entries.get(name);
    if (!entry || !hasCallerCredential(entry.definition)) return;
    const callers = this.#callers.get(name) ?? new Map<string, CallerOutcome>();
    this.#callers.set(name, callers);
    // A call that went through says nothing new about the tools: the ones seen at opening stay.
    const previous = callers.get(principal);
    const tools = outcome.state === 'ready' ? (outcome.tools ?? (previous?.state === 'ready' ? previous.tools : undefined)) : undefined;
    callers.set(principal, outcome.state === 'ready' ? { state: 'ready', ...(tools ? { tools } : {}) } : outcome);
  }

  /** Every connection's status; for `principal`, what that caller last met where the credential is theirs. */
  status(principal?: string): ConnectionStatus[] {
    return [...this.#entries.values()].map((entry) => {
      const caller = principal === undefined ? undefined : this.#callers.get(entry.definition.name)?.get(principal);
      // A caller whose requests went through keeps the listing's notes (tools not offered), not its failure.
      const base = entry.failure ? { state: entry.failure.state, missing: [entry.failure.line] } : { state: entry.state, missing: entry.missing };
      const own =
        caller?.state === 'refused'
          ? [`the server refused this caller’s credential (HTTP ${caller.status}): check \`auth\` or \`headers\``]
          : caller && base.state !== 'ready'
            ? []
            : base.missing;
      const missing = [...own, ...(entry.collision ? [entry.collision] : []), ...(entry.setup ? [entry.setup] : [])];
      // Setup only an operator can do (e.g. configuring Vercel Connect) is an error, not a sign-in.
      const state: ConnectionState = entry.collision || entry.setup || caller?.state === 'refused' ? 'error' : caller ? 'ready' : base.state;
      const listed = this.#names.tools().filter((origin) => origin.server === entry.definition.name).map((origin) => origin.eveName);
      const tools = caller?.state === 'ready' && caller.tools && listed.length === 0 ? caller.tools : listed;
      return { name: entry.definition.name, state, tools, missing };
    });
  }

  /** What each mounted tool looks like, with its Eve name, for inspection routes. */
  describeTools(): { name: string; description: string; inputSchema: unknown }[] {
    return this.#names.tools().map((origin) => {
      const listed = this.#entries.get(origin.server)?.listed?.find((tool) => tool.name === origin.tool);
      return { name: origin.eveName, description: listed?.description ?? '', inputSchema: listed?.inputSchema };
    });
  }

  /** Every mounted tool as its server listed it, with where it comes from. */
  listedTools(): { origin: ToolOrigin; listed: ListedTool }[] {
    return this.#names.tools().flatMap((origin) => {
      const listed = this.#entries.get(origin.server)?.listed?.find((tool) => tool.name === origin.tool);
      return listed ? [{ origin, listed }] : [];
    });
  }

  /** The name map from every connection's tools, in declaration order; a colliding connection is left out. */
  #rebuildNames(): void {
    const declared: DeclaredTools[] = [];
    for (const entry of this.#entries.values()) {
      const allowlist = entry.definition.tools;
      const offered = entry.listed?.filter((t) => !t.taskOnly).map((t) => t.name);
      const candidate = { server: entry.definition.name, tools: offered?.filter((t) => !allowlist || allowlist.includes(t)) ?? allowlist ?? [] };
      delete entry.collision;
      try {
        new ToolNameMap([...declared, candidate]);
        declared.push(candidate);
      } catch (error) {
        if (!(error instanceof ToolNameCollisionError)) throw error;
        entry.collision = error.message;
      }
    }
    this.#names = new ToolNameMap(declared);
  }
}

/** What a 401 at listing means: a sign-in to do, a credential the server refused, or none in the definition. */
function refusalOf(definition: Readonly<FlueConnectionDefinition>): { state: ConnectionState; missing: string } {
  if (hasSignIn(definition)) return { state: 'needs_sign_in', missing: 'sign in: the server lists its tools only to signed-in callers' };
  // Listed with no caller, a per-caller credential had nothing to send: not a refusal.
  if (hasCallerCredential(definition)) return { state: 'error', missing: 'the server lists its tools only with a caller’s credential: each caller’s status shows once their turn has used it' };
  if (hasStaticCredential(definition)) return { state: 'error', missing: 'the server refused the connection’s credential (HTTP 401): check `auth` or `headers`' };
  return { state: 'error', missing: 'the server wants a credential and the definition has none: add `auth` (bearer or oauth2) or `headers`' };
}


