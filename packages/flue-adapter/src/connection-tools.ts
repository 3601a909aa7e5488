import { createMcpConnection, defineTool, type McpConnection, type McpConnectionDefinition, type ToolDefinition } from '@flue/runtime';
import type { Logger } from '@eve-flue/session-contract';
import {
  displayNameOf,
  eveToolName,
  flueToolName,
  parseJsonRpcCall,
  standInToolName,
  type ApprovalDecision,
  type ConnectionAuthorizer,
  type ConnectionRegistry,
  type FlueConnectionDefinition,
  type SessionScope,
} from '@eve-flue/connections';
import { readRpcMessages, type McpCallResult } from './tool-output.ts';

/** A connection as mounted for one session: Flue's definition, and its sign-in if it has one. */
export interface BridgedConnection {
  mount: McpConnectionDefinition & { fetch: typeof fetch };
  authorizer?: ConnectionAuthorizer;
}

/** How a connection tool call ended upstream, for its `action.result`. */
export type RecordedCall = { kind: 'result'; result: McpCallResult } | { kind: 'denied'; reason: string };

/** The running turn of an instance, as its connection tool calls reach it. */
export interface TurnToolCalls {
  /** What the call of `flueName` with `input` brought back (or that it was denied). */
  record(flueName: string, input: unknown, outcome: Promise<RecordedCall | undefined>): void;
  /** Parks the turn on a person's approval of this call (`input.requested`, kind `tool-approval`); true when approved. */
  approve(flueName: string, eveName: string, input: unknown): Promise<boolean>;
}

/** A `tools/call` on its way upstream. */
interface ToolCall {
  id: string | number;
  name: string;
  arguments: unknown;
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
  /** The running turn of an instance, for its tool calls' results and approvals. */
  callsOf: (instanceId: string) => TurnToolCalls | undefined;
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
    const opening = open(bridged.mount, {
      gate: (call, tools) => this.#gate(instanceId, definition, call, tools),
      log: (params) => this.#serverLog(definition.name, params),
    });
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

  /**
   * Whether a call may go upstream: the connection's approval policy decides, asking a person
   * when it says `user-approval`. Every call's outcome is recorded for its `action.result`.
   */
  async #gate(instanceId: string, definition: Readonly<FlueConnectionDefinition>, call: ToolCall, tools: readonly ToolDefinition[]): Promise<Gate> {
    const calls = this.#options.callsOf(instanceId);
    const flueName = flueToolName(definition.name, call.name);
    const eveName = eveToolName(definition.name, call.name);
    const policy = definition.approval ?? 'never';
    const input = typeof call.arguments === 'object' && call.arguments !== null && !Array.isArray(call.arguments) ? (call.arguments as Record<string, unknown>) : undefined;
    const annotations = tools.find((tool) => tool.name === flueName)?.annotations;
    const decision: ApprovalDecision =
      policy === 'never'
        ? 'not-applicable'
        : policy === 'always'
          ? 'user-approval'
          : // A policy that fails refuses the call: an unclear answer never runs a gated tool.
            await Promise.resolve()
              .then(() => policy({ toolName: eveName, input, annotations }))
              .catch((error: unknown) => {
                this.#options.logger.warn({ err: error, connection: definition.name, tool: eveName }, 'the approval policy failed; the call is denied');
                return 'denied' as const;
              });
    const approved = decision === 'user-approval' ? ((await calls?.approve(flueName, eveName, call.arguments)) ?? false) : decision === 'approved' || decision === 'not-applicable';
    if (!approved) {
      const reason = decision === 'user-approval' ? 'The person did not approve this call.' : `The approval policy of ${definition.name} denied this call.`;
      calls?.record(flueName, call.arguments, Promise.resolve({ kind: 'denied', reason }));
      return { run: false, reason };
    }
    return { run: true, record: (result) => calls?.record(flueName, call.arguments, result.then((r) => r && { kind: 'result', result: r })) };
  }

  /** A server's log notification (`notifications/message`), in the bridge's log under the connection's name. */
  #serverLog(connection: string, params: unknown): void {
    const { level, logger, data } = (params ?? {}) as { level?: unknown; logger?: unknown; data?: unknown };
    const write = LOG_LEVELS[String(level)] ?? 'info';
    this.#options.logger[write]({ connection, level, ...(typeof logger === 'string' ? { logger } : {}), data }, 'MCP server log');
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

type Gate = { run: true; record: (result: Promise<McpCallResult | undefined>) => void } | { run: false; reason: string };

/** MCP log levels (RFC 5424) as the bridge's logger has them. */
const LOG_LEVELS: Record<string, 'debug' | 'info' | 'warn' | 'error'> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

interface OpenHooks {
  gate: (call: ToolCall, tools: readonly ToolDefinition[]) => Promise<Gate>;
  log: (params: unknown) => void;
}

/**
 * Opens an MCP client through the bridge's fetch: each `tools/call` passes the gate first (a
 * refused one is answered here, as a tool error, and never sent). Answers are read a second time,
 * as they arrive, for a call's raw result and for the server's log notifications. Remembers the
 * MCP session the server opens, to end it.
 */
async function open(mount: BridgedConnection['mount'], hooks: OpenHooks): Promise<Opened> {
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  let tools: readonly ToolDefinition[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const call = toolCallIn(init?.body);
    const gated = call && (await hooks.gate(call, tools));
    if (call && gated && !gated.run) {
      return Response.json({ jsonrpc: '2.0', id: call.id, result: { isError: true, content: [{ type: 'text', text: gated.reason }] } });
    }
    const response = await mount.fetch(input, init);
    sessionId = response.headers.get('mcp-session-id') ?? sessionId;
    protocolVersion = new Headers(init?.headers).get('mcp-protocol-version') ?? protocolVersion;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const recording = call !== undefined && gated?.run === true;
    if (!response.ok || !response.body || (!eventStream && !recording)) return response;
    const [mine, theirs] = response.body.tee();
    let result: McpCallResult | undefined;
    const read = readRpcMessages(mine, eventStream, (message) => {
      if (message.method === 'notifications/message') hooks.log(message.params);
      else if (call && message.id === call.id && message.result) result = message.result;
    }).then(
      () => result,
      () => result,
    );
    if (gated?.run) gated.record(read);
    return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  const connection = await createMcpConnection({ ...mount, fetch });
  tools = connection.tools;
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

function toolCallIn(body: RequestInit['body']): ToolCall | undefined {
  const call = typeof body === 'string' ? parseJsonRpcCall(body) : undefined;
  if (call?.toolName === undefined || call.id === null) return undefined;
  return { id: call.id, name: call.toolName, arguments: call.arguments ?? {} };
}
