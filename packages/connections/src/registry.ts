import type { FlueConnectionDefinition } from './definition.ts';
import { listServerTools, type ListedTool } from './listing.ts';
import { ToolNameCollisionError, ToolNameMap, type DeclaredTools } from './naming.ts';

export type ConnectionState = 'ready' | 'needs_sign_in' | 'error';

export interface ConnectionStatus {
  name: string;
  state: ConnectionState;
  /** Eve names of the tools the agent gets from this connection. */
  tools: string[];
  /** One line per thing the connection is missing; empty when ready. */
  missing: string[];
}

interface Entry {
  definition: Readonly<FlueConnectionDefinition>;
  listed?: ListedTool[];
  state: ConnectionState;
  missing: string[];
  /** Setup the operator still owes (e.g. a sign-in backend that is not configured). */
  setup?: string;
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
    return [...this.#entries.values()].filter((e) => !e.missing.some((m) => m.startsWith('Tool name collision'))).map((e) => e.definition);
  }

  /** Lists every connection's tools again and updates states and the name map. */
  async refresh(): Promise<ConnectionStatus[]> {
    await Promise.all([...this.#entries.keys()].map((name) => this.refreshOne(name)));
    return this.status();
  }

  async refreshOne(name: string): Promise<void> {
    const entry = this.#entries.get(name);
    if (!entry) return;
    try {
      const listed = await listServerTools(entry.definition.url, this.#fetchFor(entry.definition));
      entry.listed = listed;
      const offered = new Set(listed.map((t) => t.name));
      const absent = (entry.definition.tools ?? []).filter((t) => !offered.has(t));
      entry.state = absent.length > 0 ? 'error' : 'ready';
      entry.missing = absent.map((t) => `the server does not offer the allowlisted tool "${t}"`);
    } catch (error) {
      this.markUnavailable(name, describe(error));
    }
    this.#rebuildNames();
  }

  /** Records that a connection could not be used (from a listing or from the agent runtime). */
  markUnavailable(name: string, reason: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    entry.state = 'error';
    entry.missing = [`the server is unavailable: ${reason}`];
  }

  /** Records setup a connection lacks before anyone can sign in to it; it stays until restart. */
  requireSetup(name: string, missing: string): void {
    const entry = this.#entries.get(name);
    if (entry) entry.setup = missing;
  }

  status(): ConnectionStatus[] {
    return [...this.#entries.values()].map((entry) => ({
      name: entry.definition.name,
      state: entry.setup && entry.state === 'ready' ? 'needs_sign_in' : entry.state,
      tools: this.#toolsOf(entry).map((tool) => this.#names.toEve(tool.flueName)),
      missing: [...entry.missing, ...(entry.setup ? [entry.setup] : [])],
    }));
  }

  /** What each listed tool looks like, with its Eve name, for inspection routes. */
  describeTools(): { name: string; description: string; inputSchema: unknown }[] {
    return [...this.#entries.values()].flatMap((entry) =>
      (entry.listed ?? [])
        .filter((tool) => !entry.definition.tools || entry.definition.tools.includes(tool.name))
        .map((tool) => ({ name: this.#names.toEve(this.#flueName(entry, tool.name)), description: tool.description, inputSchema: tool.inputSchema })),
    );
  }

  #flueName(entry: Entry, tool: string): string {
    return this.#names.tools().find((o) => o.server === entry.definition.name && o.tool === tool)?.flueName ?? tool;
  }

  #toolsOf(entry: Entry) {
    return this.#names.tools().filter((o) => o.server === entry.definition.name);
  }

  #rebuildNames(): void {
    const declared: DeclaredTools[] = [];
    for (const entry of this.#entries.values()) {
      entry.missing = entry.missing.filter((m) => !m.startsWith('Tool name collision'));
      const tools = entry.listed?.map((t) => t.name).filter((t) => !entry.definition.tools || entry.definition.tools.includes(t)) ?? entry.definition.tools ?? [];
      const candidate = [...declared, { server: entry.definition.name, tools }];
      try {
        new ToolNameMap(candidate);
        declared.push(candidate.at(-1)!);
      } catch (error) {
        if (!(error instanceof ToolNameCollisionError)) throw error;
        entry.state = 'error';
        entry.missing = [error.message];
      }
    }
    this.#names = new ToolNameMap(declared);
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = error instanceof Error ? error.message : String(error);
  return cause?.code ? `${message} (${cause.code})` : message;
}
