import { createMcpConnection, defineTool, type McpConnection, type McpConnectionDefinition, type ToolDefinition } from '@flue/runtime';
import type { Logger } from '@eve-flue/compat-server';
import {
  displayNameOf,
  standInToolName,
  type ConnectionAuthorizer,
  type ConnectionRegistry,
  type FlueConnectionDefinition,
  type SessionScope,
} from '@eve-flue/connections';

/** A connection as mounted for one session: Flue's definition, and its sign-in if it has one. */
export interface BridgedConnection {
  mount: McpConnectionDefinition & { fetch: typeof fetch };
  authorizer?: ConnectionAuthorizer;
}

interface Opened {
  connection: McpConnection;
  /** Ends the server's MCP session (`DELETE` with `Mcp-Session-Id`), if it opened one. */
  endSession(): Promise<void>;
}

export interface ConnectionToolsOptions {
  connections: ConnectionRegistry;
  mount: (name: string, session: SessionScope) => BridgedConnection;
  /** A stand-in's sign-in ended authorized: the instance's running turn goes on with the real tools. */
  onSignedIn: (instanceId: string, connection: string) => void;
  logger: Logger;
}

/**
 * The connection tools each Flue instance offers its model. The bridge keeps the MCP clients
 * itself (one per instance and connection, opened at the first turn that may use them) so that it
 * decides what a turn sees: the server's tools; for a server that shows its tools only after a
 * sign-in, one stand-in tool whose call starts the sign-in; nothing for an anonymous turn on a
 * `requiresPrincipal` connection. A connection that could not be opened is tried again next turn.
 */
export class ConnectionTools {
  readonly #options: ConnectionToolsOptions;
  readonly #opened = new Map<string, Map<string, Promise<Opened>>>();

  constructor(options: ConnectionToolsOptions) {
    this.#options = options;
  }

  /** The tools for the next submission of `instanceId`, for a turn of `principal`. */
  async prepare(instanceId: string, scope: SessionScope, principal: string | undefined): Promise<ToolDefinition[]> {
    const mountable = this.#options.connections.mountable().filter((d) => !d.requiresPrincipal || principal !== undefined);
    return (await Promise.all(mountable.map((definition) => this.#toolsOf(instanceId, definition, scope)))).flat();
  }

  /** The instance ended (clear, reset, retention, shutdown): its MCP sessions end with it. */
  async end(instanceId: string): Promise<void> {
    const opened = this.#opened.get(instanceId);
    if (!opened) return;
    this.#opened.delete(instanceId);
    await Promise.all(
      [...opened].map(async ([name, opening]) => {
        const connection = await opening.catch(() => undefined);
        await connection?.endSession().catch((error: unknown) => this.#options.logger.warn({ err: error, connection: name }, 'could not end the MCP session'));
        await connection?.connection.close().catch(() => undefined);
      }),
    );
  }

  async endAll(): Promise<void> {
    await Promise.all([...this.#opened.keys()].map((instanceId) => this.end(instanceId)));
  }

  async #toolsOf(instanceId: string, definition: Readonly<FlueConnectionDefinition>, scope: SessionScope): Promise<ToolDefinition[]> {
    let opened = this.#opened.get(instanceId);
    if (!opened) this.#opened.set(instanceId, (opened = new Map()));
    const known = opened.get(definition.name);
    if (known) return (await known).connection.tools;
    const bridged = this.#options.mount(definition.name, scope);
    const refusalsBefore = bridged.authorizer?.refusals ?? 0;
    const opening = open(bridged.mount);
    opened.set(definition.name, opening);
    try {
      return (await opening).connection.tools;
    } catch (error) {
      if (opened.get(definition.name) === opening) opened.delete(definition.name);
      if (bridged.authorizer && bridged.authorizer.refusals > refusalsBefore) return [this.#standIn(instanceId, definition, bridged.authorizer)];
      const reason = error instanceof Error ? error.message : String(error);
      this.#options.connections.markUnavailable(definition.name, reason);
      this.#options.logger.warn({ connection: definition.name, reason }, 'MCP server is unavailable; its tools are not offered this turn');
      return [];
    }
  }

  /** The one tool standing for a connection whose server shows its tools only after a sign-in. */
  #standIn(instanceId: string, definition: Readonly<FlueConnectionDefinition>, authorizer: ConnectionAuthorizer): ToolDefinition {
    const name = standInToolName(definition.name);
    const displayName = displayNameOf(definition);
    return defineTool({
      name,
      description:
        `${displayName}${definition.description ? ` (${definition.description})` : ''} shows its tools only to signed-in people. ` +
        `Call this when the request needs ${displayName}: the person is asked to sign in, and its tools are offered once they have.`,
      run: async () => {
        const outcome = await authorizer.signIn(name);
        if (outcome.outcome !== 'authorized') {
          throw new Error(`${displayName} is not connected (${outcome.outcome}: ${outcome.reason}). The person can sign in and ask again.`);
        }
        this.#options.onSignedIn(instanceId, definition.name);
        return `Signed in to ${displayName}: its tools are offered from the next step on.`;
      },
    }) as unknown as ToolDefinition;
  }
}

/** Opens an MCP client through the bridge's fetch, remembering the session the server opens. */
async function open(mount: BridgedConnection['mount']): Promise<Opened> {
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await mount.fetch(input, init);
    sessionId = response.headers.get('mcp-session-id') ?? sessionId;
    protocolVersion = new Headers(init?.headers).get('mcp-protocol-version') ?? protocolVersion;
    return response;
  };
  const connection = await createMcpConnection({ ...mount, fetch });
  return {
    connection,
    async endSession() {
      if (!sessionId) return;
      const headers: Record<string, string> = { 'mcp-session-id': sessionId, ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}) };
      const response = await mount.fetch(mount.url instanceof URL ? mount.url.href : mount.url, { method: 'DELETE', headers });
      await response.body?.cancel();
    },
  };
}
