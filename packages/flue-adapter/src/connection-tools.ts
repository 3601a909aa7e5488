import { createMcpConnection, defineTool, type McpConnection, type McpConnectionDefinition, type ToolDefinition } from '@flue/runtime';
import { TurnError, type Logger, type Principal } from '@eve-flue/session-contract';
import {
  decideApproval,
  displayNameOf,
  eveToolName,
  flueToolName,
  modelFacingListing,
  ProvidedArgumentError,
  shapesListing,
  parseJsonRpcCall,
  standInToolName,
  withProvidedArguments,
  type ConnectionAuthorizer,
  type ConnectionRegistry,
  type ConnectionSets,
  type FlueConnectionDefinition,
  type SessionScope,
  connectionIdentity,
  describeFailure,
  failureStatus,
  hasCallerCredential,
  hasSignIn,
} from '@eve-flue/connections';
import { McpHttpError, McpSession, type ListedServer } from './mcp-session.ts';
import { readRpcMessages, type McpCallResult, type RpcMessage } from './tool-output.ts';

/** Connections resolved per caller: each turn's set (or a direct call's, with no session), and forgetting a session's sets when it ends. */
export type CallerConnections = Pick<ConnectionSets, 'for' | 'hold' | 'forget'>;

/** A connection as mounted for one session: Flue's definition, and its sign-in if it has one. */
export interface BridgedConnection {
  mount: McpConnectionDefinition & { fetch: typeof fetch };
  authorizer?: ConnectionAuthorizer;
}

/** How a connection tool call ended upstream, for its `action.result`. */
export type RecordedCall = { kind: 'result'; result: McpCallResult; hasOutputSchema: boolean } | { kind: 'denied'; reason: string };

/** The running turn of an instance, as its connection tool calls reach it. */
export interface TurnToolCalls {
  /** What the call of `flueName` with `input` brought back (or that it was denied). */
  record(flueName: string, input: unknown, outcome: Promise<RecordedCall | undefined>): void;
  /** Parks the turn on a person's approval of this call (`input.requested`, kind `tool-approval`); true when approved. */
  approve(flueName: string, eveName: string, input: unknown): Promise<boolean>;
  /** The model's id of this call (the `callId` of its `action.result`), for provided arguments. */
  callIdOf(flueName: string, input: unknown): Promise<string>;
}

/** A `tools/call` on its way upstream. */
interface ToolCall {
  id: string | number;
  name: string;
  arguments: unknown;
}

interface Opened {
  connection: McpConnection;
}

export interface ConnectionToolsOptions {
  connections: ConnectionRegistry;
  /** Connections resolved per caller (a `connections` function): the caller's set replaces `connections`. */
  callerConnections?: CallerConnections;
  mount: (definition: Readonly<FlueConnectionDefinition>, session: SessionScope) => BridgedConnection;
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
  readonly #opened = new Map<string, Map<string, Opening>>();

  constructor(options: ConnectionToolsOptions) {
    this.#options = options;
  }

  /** The tools for the next submission of `instanceId`, for a turn of `principal`. */
  async prepare(instanceId: string, scope: SessionScope, principal: Principal | undefined): Promise<ToolDefinition[]> {
    const connections = await this.#connectionsFor(scope, principal);
    const mountable = connections.mountable().filter((d) => !d.requiresPrincipal || principal !== undefined);
    return (await Promise.all(mountable.map((definition) => this.#toolsOf(instanceId, definition, scope, connections, principal?.id)))).flat();
  }

  /** The caller's connections; a resolver that fails fails the turn (the next message tries again). */
  async #connectionsFor(scope: SessionScope, principal: Principal | undefined): Promise<ConnectionRegistry> {
    if (!this.#options.callerConnections) return this.#options.connections;
    try {
      return await this.#options.callerConnections.hold({ sessionId: scope.sessionId, ...(principal ? { principal } : {}) });
    } catch (error) {
      this.#options.logger.warn({ err: error, sessionId: scope.sessionId }, 'the connection resolver failed; the turn fails');
      throw new TurnError('CONNECTIONS_UNAVAILABLE', (error instanceof Error ? error.message : String(error)).replace(/^\[eve-flue\] /, ''));
    }
  }

  /** The instance ended (clear, reset, retention, shutdown): its MCP sessions end with it. */
  async end(instanceId: string): Promise<void> {
    const opened = this.#opened.get(instanceId);
    if (!opened) return;
    this.#opened.delete(instanceId);
    await Promise.all(
      [...opened].map(async ([name, opening]) => {
        // First: an opening still waiting for a hung server stops waiting.
        await opening.session.end().catch((error: unknown) => this.#options.logger.warn({ err: error, connection: name }, 'could not end the MCP session'));
        const connection = await opening.promise.catch(() => undefined);
        await connection?.connection.close().catch(() => undefined);
      }),
    );
  }

  async endAll(): Promise<void> {
    await Promise.all([...this.#opened.keys()].map((instanceId) => this.end(instanceId)));
  }

  async #toolsOf(
    instanceId: string,
    definition: Readonly<FlueConnectionDefinition>,
    scope: SessionScope,
    connections: ConnectionRegistry,
    principal: string | undefined,
  ): Promise<ToolDefinition[]> {
    let opened = this.#opened.get(instanceId);
    if (!opened) this.#opened.set(instanceId, (opened = new Map()));
    // By identity (endpoint and instance key): a caller whose set names the connection differently gets a client of their own.
    const identity = connectionIdentity(definition);
    const known = opened.get(identity);
    // A server that could not be reached last time is not waited for: its tools come once it answers.
    if (known) return known.settled || !connections.isUnavailable(definition.name) ? (await known.promise).connection.tools : [];
    const bridged = this.#options.mount(definition, scope);
    const refusalsBefore = bridged.authorizer?.refusals ?? 0;
    const listed = connections.listing(definition.name);
    const opening = open(bridged.mount, listed && listedServer(listed), {
      gate: (call, tools) => this.#gate(instanceId, definition, scope, call, tools),
      log: (params) => this.#serverLog(definition.name, params),
      ...(shapesListing(definition) ? { listing: (result: unknown) => modelFacingListing(result, definition) } : {}),
      progress: (params) => this.#progress(definition.name, params),
      answered: (answer) => this.#answered(connections, definition, scope.turn()?.principal?.id, answer),
    });
    opened.set(identity, opening);
    // Opening on a listing asks nothing of the server; otherwise one that could not be reached last time is not waited for.
    if (!listed && connections.isUnavailable(definition.name)) return this.#inBackground(opening, definition, connections);
    try {
      const { connection } = await opening.promise;
      if (!listed) connections.markReachable(definition.name);
      // Opened with the caller's credential (nothing was listed before): what they see is theirs.
      if (!listed && principal !== undefined) {
        connections.recordCaller(definition.name, principal, { state: 'ready', tools: connection.tools.map((tool) => connections.names.toEve(tool.name)) });
      }
      return connection.tools;
    } catch (error) {
      if (opened.get(identity) === opening) opened.delete(identity);
      if (bridged.authorizer && bridged.authorizer.refusals > refusalsBefore) return [this.#standIn(instanceId, definition, bridged.authorizer)];
      const status = failureStatus(error);
      // This caller's credential was refused: their status says so, nobody else's changes.
      if ((status === 401 || status === 403) && principal !== undefined && hasCallerCredential(definition)) {
        connections.recordCaller(definition.name, principal, { state: 'refused', status });
        return [];
      }
      // The connection's own credential was refused (or it has none): the line the startup listing gives.
      if (status === 401 && !hasSignIn(definition)) {
        connections.markRefused(definition.name);
        return [];
      }
      const reason = describeFailure(error);
      connections.markUnavailable(definition.name, reason);
      this.#options.logger.warn({ connection: definition.name, reason }, 'MCP server is unavailable; its tools are not offered this turn');
      return [];
    } finally {
      opening.settled = true;
    }
  }

  /** An opening the turn does not wait for: once it ends, the next submission offers its tools (or tries again). */
  #inBackground(opening: Opening, definition: Readonly<FlueConnectionDefinition>, connections: ConnectionRegistry): ToolDefinition[] {
    const identity = connectionIdentity(definition);
    opening.promise.then(
      () => {
        opening.settled = true;
        connections.markReachable(definition.name);
      },
      (error: unknown) => {
        opening.settled = true;
        for (const opened of this.#opened.values()) if (opened.get(identity) === opening) opened.delete(identity);
        connections.markUnavailable(definition.name, describeFailure(error));
      },
    );
    return [];
  }

  /**
   * Whether a call may go upstream: the connection's approval policy decides (on the model's
   * input), asking a person when it says `user-approval`; then the provided arguments go in.
   * Every call's outcome is recorded for its `action.result`.
   */
  async #gate(instanceId: string, definition: Readonly<FlueConnectionDefinition>, scope: SessionScope, call: ToolCall, tools: readonly ToolDefinition[]): Promise<Gate> {
    const calls = this.#options.callsOf(instanceId);
    const flueName = flueToolName(definition.name, call.name);
    const eveName = eveToolName(definition.name, call.name);
    const input = typeof call.arguments === 'object' && call.arguments !== null && !Array.isArray(call.arguments) ? (call.arguments as Record<string, unknown>) : undefined;
    const annotations = tools.find((tool) => tool.name === flueName)?.annotations;
    const decision = await decideApproval(definition, { toolName: eveName, input, annotations }, this.#options.logger);
    const approved = decision === 'user-approval' ? ((await calls?.approve(flueName, eveName, call.arguments)) ?? false) : decision === 'approved' || decision === 'not-applicable';
    if (!approved) {
      const reason = decision === 'user-approval' ? 'The person did not approve this call.' : `The approval policy of ${definition.name} denied this call.`;
      calls?.record(flueName, call.arguments, Promise.resolve({ kind: 'denied', reason }));
      return { run: false, reason };
    }
    let args: unknown;
    try {
      args = await withProvidedArguments(definition, call.arguments, async () => {
        const principal = scope.turn()?.principal;
        const callId = (await calls?.callIdOf(flueName, call.arguments)) ?? `call_${call.id}`;
        return { sessionId: scope.sessionId, ...(principal !== undefined ? { principal: principal.id, auth: principal } : {}), toolName: call.name, callId };
      });
    } catch (error) {
      if (!(error instanceof ProvidedArgumentError)) throw error;
      this.#options.logger.warn({ err: error.cause, connection: definition.name, tool: eveName }, error.message);
      const reason = error.message.replace(/^\[eve-flue\] /, '');
      calls?.record(flueName, call.arguments, Promise.resolve({ kind: 'result', result: { isError: true, content: [{ type: 'text', text: reason }] }, hasOutputSchema: false }));
      return { run: false, reason };
    }
    return {
      run: true,
      arguments: args,
      record: (result, hasOutputSchema) => calls?.record(flueName, call.arguments, result.then((r) => r && { kind: 'result', result: r, hasOutputSchema })),
    };
  }

  /** A server's log notification (`notifications/message`), in the bridge's log under the connection's name. */
  #serverLog(connection: string, params: unknown): void {
    const { level, logger, data } = (params ?? {}) as { level?: unknown; logger?: unknown; data?: unknown };
    const write = LOG_LEVELS[String(level)] ?? 'info';
    // `level` is the bridge log's own: the server's level goes under its own key.
    this.#options.logger[write]({ connection, serverLevel: level, ...(typeof logger === 'string' ? { logger } : {}), data }, 'MCP server log');
  }

  /**
   * What a call's answer (or its failure to come) says of the connection: a refused credential
   * (the caller's own, or the connection's), a server that fails or cannot be reached, or one
   * that answers again.
   */
  #answered(connections: ConnectionRegistry, definition: Readonly<FlueConnectionDefinition>, principal: string | undefined, answer: Response | Error): void {
    const name = definition.name;
    if (answer instanceof Error) {
      // A call the person cancelled says nothing about the server.
      if (answer.name !== 'AbortError') connections.markUnavailable(name, describeFailure(answer));
      return;
    }
    const { status } = answer;
    if ((status === 401 || status === 403) && principal !== undefined && hasCallerCredential(definition)) {
      connections.recordCaller(name, principal, { state: 'refused', status });
    } else if (status === 401 && !hasSignIn(definition)) {
      // (A sign-in connection's 401 is the broker's: a sign-in, not a status for everyone.)
      connections.markRefused(name);
    } else if (status >= 500) {
      void answer
        .clone()
        .text()
        .then((body) => connections.markUnavailable(name, describeFailure(new McpHttpError(status, body))))
        .catch(() => connections.markUnavailable(name, `HTTP ${status}`));
    } else if (status < 300) {
      connections.markReachable(name);
      if (principal !== undefined) connections.recordCaller(name, principal, { state: 'ready' });
    }
  }

  /** A server's progress notification for a call (`notifications/progress`), in the bridge's log. */
  #progress(connection: string, params: unknown): void {
    const { progressToken, progress, total, message } = (params ?? {}) as { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown };
    const fields = { connection, progressToken, progress, ...(total !== undefined ? { total } : {}), ...(typeof message === 'string' ? { progressMessage: message } : {}) };
    this.#options.logger.info(fields, 'MCP tool progress');
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

type Gate =
  | { run: true; arguments: unknown; record: (result: Promise<McpCallResult | undefined>, hasOutputSchema: boolean) => void }
  | { run: false; reason: string };

/** One connection's opening for an instance, on its MCP session; `settled` once it succeeded or failed. */
interface Opening {
  session: McpSession;
  promise: Promise<Opened>;
  settled: boolean;
}

function listedServer(listing: NonNullable<ReturnType<ConnectionRegistry['listing']>>): ListedServer {
  return { ...listing, tools: listing.tools.map((tool) => tool.definition) };
}

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
  progress: (params: unknown) => void;
  /** A call's answer from the server, or why none came. */
  answered: (answer: Response | Error) => void;
  /** What the model is shown of a `tools/list` result, when the connection filters or provides arguments. */
  listing?: (result: unknown) => unknown;
}

/**
 * Opens an MCP client on the bridge's MCP session (see `McpSession`): each `tools/call` passes
 * the gate first (a refused one is answered here, as a tool error, and never sent). Answers are
 * read a second time, as they arrive, for a call's raw result, its progress and the server's log
 * notifications, and `tools/list` answers for which tools declare an output schema.
 */
function open(mount: BridgedConnection['mount'], listed: ListedServer | undefined, hooks: OpenHooks): Opening {
  const onMessage = (message: RpcMessage) => {
    if (message.method === 'notifications/message') hooks.log(message.params);
    else if (message.method === 'notifications/progress') hooks.progress(message.params);
  };
  const session = new McpSession({ url: mount.url instanceof URL ? mount.url.href : mount.url, upstream: mount.fetch, ...(listed ? { listed } : {}), onStreamMessage: onMessage });
  const typed = new Set<string>();
  for (const tool of listed?.tools ?? []) if (declaresOutputSchema(tool)) typed.add((tool as { name: string }).name);
  let tools: readonly ToolDefinition[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const call = toolCallIn(init?.body);
    const gated = call && (await hooks.gate(call, tools));
    if (call && gated && !gated.run) {
      return Response.json({ jsonrpc: '2.0', id: call.id, result: { isError: true, content: [{ type: 'text', text: gated.reason }] } });
    }
    const sent = call !== undefined && gated?.run === true;
    const withProvided = call && gated?.run && gated.arguments !== call.arguments ? { ...init, body: withArguments(init?.body as string, gated.arguments) } : init;
    let response: Response;
    try {
      response = await session.fetch(input, withProvided);
    } catch (error) {
      if (sent) hooks.answered(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    if (sent) hooks.answered(response);
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const listing = methodOf(init?.body) === 'tools/list';
    if (!response.ok || !response.body || (!eventStream && !sent && !listing)) return response;
    let result: McpCallResult | undefined;
    const readMessage = (message: RpcMessage) => {
      onMessage(message);
      if (listing && message.result) for (const tool of (message.result as { tools?: unknown[] }).tools ?? []) if (declaresOutputSchema(tool)) typed.add((tool as { name: string }).name);
      if (call && message.id === call.id && message.result) result = message.result;
    };
    if (listing && hooks.listing) return shapedListing(response, eventStream, readMessage, hooks.listing);
    const [mine, theirs] = response.body.tee();
    const read = readRpcMessages(mine, eventStream, readMessage).then(
      () => result,
      () => result,
    );
    if (call && gated?.run) gated.record(read, typed.has(call.name));
    return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  const promise = createMcpConnection({ ...mount, fetch }).then((connection) => {
    tools = connection.tools;
    return { connection };
  });
  return { session, promise, settled: false };
}

/** The body of a `tools/call` with the arguments that go upstream. */
function withArguments(body: string, args: unknown): string {
  const message = JSON.parse(body) as { params: Record<string, unknown> };
  return JSON.stringify({ ...message, params: { ...message.params, arguments: args } });
}

/** A `tools/list` answer (JSON or an event stream), read in full, as one JSON answer whose result is what the model is shown. */
async function shapedListing(response: Response, eventStream: boolean, read: (message: RpcMessage) => void, shape: (result: unknown) => unknown): Promise<Response> {
  const messages: RpcMessage[] = [];
  await readRpcMessages(response.body!, eventStream, (message) => {
    read(message);
    messages.push(message.result && Array.isArray((message.result as { tools?: unknown }).tools) ? { ...message, result: shape(message.result) as RpcMessage['result'] } : message);
  });
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(messages.length === 1 ? messages[0] : messages), { status: response.status, statusText: response.statusText, headers });
}

function declaresOutputSchema(tool: unknown): boolean {
  return typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string' && (tool as { outputSchema?: unknown }).outputSchema !== undefined;
}

function methodOf(body: RequestInit['body']): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const method = (JSON.parse(body) as { method?: unknown }).method;
    return typeof method === 'string' ? method : undefined;
  } catch {
    return undefined;
  }
}

function toolCallIn(body: RequestInit['body']): ToolCall | undefined {
  const call = typeof body === 'string' ? parseJsonRpcCall(body) : undefined;
  if (call?.toolName === undefined || call.id === null) return undefined;
  return { id: call.id, name: call.toolName, arguments: call.arguments ?? {} };
}
