/**
 * Tool names across the two frameworks. Flue names an MCP tool `mcp__<server>__<tool>` after
 * sanitizing both parts; Eve clients see the same tool as `connection__<server>__<tool>`.
 * Sanitizing loses information (and server names may contain `__`), so names are only ever
 * mapped forward from declared (server, tool) pairs, never parsed back.
 */

const FLUE_PREFIX = 'mcp__';
const EVE_PREFIX = 'connection__';

/** Flue's own rule (`@flue/runtime` `sanitizeToolNamePart`), reproduced exactly. */
export function sanitizeToolNamePart(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, '_').replace(/^_+|_+$/g, '') || 'unnamed';
}

/** Whether a name is of the kind the bridge gives connection tools, in either framework. */
export function isConnectionToolName(name: string): boolean {
  return name.startsWith(FLUE_PREFIX) || name.startsWith(EVE_PREFIX);
}

/**
 * A Flue connection tool name (`mcp__…`) under Eve's prefix; any other name as it is. Both names
 * are built from the same sanitized parts, so the swap is exact for a name that came from a
 * connection.
 */
export function eveNameOfFlueName(flueName: string): string {
  return flueName.startsWith(FLUE_PREFIX) ? `${EVE_PREFIX}${flueName.slice(FLUE_PREFIX.length)}` : flueName;
}

export function flueToolName(server: string, tool: string): string {
  return `${FLUE_PREFIX}${sanitizeToolNamePart(server)}__${sanitizeToolNamePart(tool)}`;
}

export function eveToolName(server: string, tool: string): string {
  return `${EVE_PREFIX}${sanitizeToolNamePart(server)}__${sanitizeToolNamePart(tool)}`;
}

/**
 * The one tool standing for a connection whose server shows its tools only after a sign-in
 * (as Eve shows such a connection as one entry named after it): `connection__<server>`.
 */
export function standInToolName(server: string): string {
  return `${EVE_PREFIX}${sanitizeToolNamePart(server)}`;
}

export interface DeclaredTools {
  /** The connection (MCP server) name as declared. */
  server: string;
  /** The server's own tool names. */
  tools: readonly string[];
}

export interface ToolOrigin {
  server: string;
  tool: string;
  flueName: string;
  eveName: string;
}

/** Two declared tools that would reach the model under one name. */
export class ToolNameCollisionError extends Error {
  override name = 'ToolNameCollisionError';
  readonly first: ToolOrigin;
  readonly second: ToolOrigin;

  constructor(first: ToolOrigin, second: ToolOrigin) {
    super(
      `Tool name collision: "${first.tool}" from connection "${first.server}" and "${second.tool}" from connection ` +
        `"${second.server}" both become ${first.flueName} (Eve: ${first.eveName}). Rename one connection or filter its tools.`,
    );
    this.first = first;
    this.second = second;
  }
}

/** A forward map between Flue and Eve tool names, built from what connections declare. */
export class ToolNameMap {
  readonly #byFlue = new Map<string, ToolOrigin>();
  readonly #byEve = new Map<string, ToolOrigin>();

  constructor(declared: readonly DeclaredTools[] = [], otherToolNames: readonly string[] = []) {
    for (const { server, tools } of declared) for (const tool of tools) this.#add(server, tool);
    for (const name of otherToolNames) {
      const clash = this.#byEve.get(name) ?? this.#byFlue.get(name);
      if (clash) throw new ToolNameCollisionError(clash, { server: '(agent tool)', tool: name, flueName: name, eveName: name });
    }
  }

  /**
   * The Eve name of a Flue tool name; names that are not connection tools keep their name. An
   * `mcp__` name not (yet) in the map, e.g. a tool a server showed only to a signed-in caller,
   * swaps its prefix: both names are built from the same sanitized parts, so the swap is exact
   * and no `mcp__` name ever reaches an Eve client.
   */
  toEve(flueName: string): string {
    const known = this.#byFlue.get(flueName)?.eveName;
    if (known) return known;
    return eveNameOfFlueName(flueName);
  }

  /** The Flue name of an Eve tool name; names that are not connection tools keep their name. */
  toFlue(eveName: string): string {
    return this.#byEve.get(eveName)?.flueName ?? eveName;
  }

  origin(name: string): ToolOrigin | undefined {
    return this.#byFlue.get(name) ?? this.#byEve.get(name);
  }

  /** Every connection tool, in declaration order. */
  tools(): ToolOrigin[] {
    return [...this.#byFlue.values()];
  }

  #add(server: string, tool: string): void {
    const origin: ToolOrigin = { server, tool, flueName: flueToolName(server, tool), eveName: eveToolName(server, tool) };
    const clash = this.#byFlue.get(origin.flueName);
    if (clash) throw new ToolNameCollisionError(clash, origin);
    this.#byFlue.set(origin.flueName, origin);
    this.#byEve.set(origin.eveName, origin);
  }
}

/** `mapFlueToEve` over a map: for agent authors who hold the declared names. */
export function mapFlueToEve(map: ToolNameMap, flueName: string): string {
  return map.toEve(flueName);
}

export function mapEveToFlue(map: ToolNameMap, eveName: string): string {
  return map.toFlue(eveName);
}
