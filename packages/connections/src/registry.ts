import { CredentialError, hasStaticCredential } from './credentials.ts';
import { hasSignIn, type FlueConnectionDefinition } from './definition.ts';
import { listServerTools, type ListedTool } from './listing.ts';
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
  state: ConnectionState;
  missing: string[];
  /** Setup the operator still owes (e.g. a sign-in backend that is not configured). */
  setup?: string;
  /** Why this connection is not mounted: its tool names collide with an earlier connection's. */
  collision?: string;
}

/**
 * The declared connections, what each offers, and what each is missing. The tool-name map is
 * rebuilt from every listing, so names always map forward from what servers declare.
 */
export class ConnectionRegistry {
  readonly #entries: Map<string, Entry>;
  readonly #fetchFor: (definition: Readonly<FlueConnectionDefinition>) => typeof fetch;
  #names = new ToolNameMap();

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
      const listed = await listServerTools(entry.definition.url, fetch);
      entry.listed = listed;
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
      if ((error as { code?: unknown }).code === 401) {
        const refusal = refusalOf(entry.definition);
        entry.state = refusal.state;
        entry.missing = [refusal.missing];
        return;
      }
      if (error instanceof CredentialError) {
        entry.state = 'error';
        entry.missing = [`${error.message.replace(/^\[eve-flue\] /, '')}: its tools are listed at the first turn that has one`];
        return;
      }
      this.markUnavailable(entry.definition.name, describe(error));
    }
  }

  /** Records that a connection could not be used (from a listing or from the agent runtime). */
  markUnavailable(name: string, reason: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    entry.state = 'error';
    entry.missing = [`the server is unavailable: ${reason}`];
  }

  /** Records that a sign-in could not even start (e.g. the server's metadata names another resource). */
  markSignInFailed(name: string, reason: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    entry.state = 'error';
    entry.missing = [`sign-in refused: ${reason}`];
  }

  /** Records setup a connection lacks before anyone can sign in to it; it stays until restart. */
  requireSetup(name: string, missing: string): void {
    const entry = this.#entries.get(name);
    if (entry) entry.setup = missing;
  }

  status(): ConnectionStatus[] {
    return [...this.#entries.values()].map((entry) => {
      const missing = [...entry.missing, ...(entry.collision ? [entry.collision] : []), ...(entry.setup ? [entry.setup] : [])];
      // Setup only an operator can do (e.g. configuring Vercel Connect) is an error, not a sign-in.
      const state: ConnectionState = entry.collision || entry.setup ? 'error' : entry.state;
      const tools = this.#names.tools().filter((origin) => origin.server === entry.definition.name).map((origin) => origin.eveName);
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
  if (hasStaticCredential(definition)) return { state: 'error', missing: 'the server refused the connection’s credential (HTTP 401): check `auth` or `headers`' };
  return { state: 'error', missing: 'the server wants a credential and the definition has none: add `auth` (bearer or oauth2) or `headers`' };
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = error instanceof Error ? error.message : String(error);
  return cause?.code ? `${message} (${cause.code})` : message;
}
