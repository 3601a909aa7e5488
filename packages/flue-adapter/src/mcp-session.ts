import { randomUUID } from 'node:crypto';
import { readRpcMessages, type RpcMessage } from './tool-output.ts';

/** What a server listed before (the registry's listing at startup), enough to answer an MCP client's opening. */
export interface ListedServer {
  /** The `tools/list` entries as the server sent them. */
  tools: readonly unknown[];
  capabilities?: unknown;
  serverInfo?: unknown;
  instructions?: string;
  /** The version the server agreed to when it was listed. */
  protocolVersion?: string;
}

export interface McpSessionOptions {
  url: string;
  /** The connection's upstream fetch (credentials, sign-in, timeout). */
  upstream: typeof fetch;
  /** When given, the client's `initialize` and `tools/list` are answered from it: nothing reaches the server until a call. */
  listed?: ListedServer;
  /** Each message the server sends on the session's standing stream (log notifications, …). */
  onStreamMessage: (message: RpcMessage) => void;
}

interface OpenSession {
  id: string | undefined;
  protocolVersion: string | undefined;
  standing: AbortController;
}

interface RpcRequest {
  jsonrpc: '2.0';
  id?: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/**
 * The MCP session of one connection for one Flue instance, between Flue's MCP client and the
 * server. The bridge, not Flue's client, owns it:
 * - opening costs a turn nothing when the tools are known (`listed`): the server is contacted at
 *   the first call, so a server that hangs delays only the calls made to it;
 * - a 404 for the session (the server restarted and forgot it) opens a new session and sends
 *   the request once more, as the MCP spec asks of a client;
 * - the standing GET stream is the bridge's own (Flue's client gets 405), read for the server's
 *   notifications;
 * - each `tools/call` carries a `progressToken`, so that servers report progress.
 */
export class McpSession {
  readonly #options: McpSessionOptions;
  /** The `initialize` params of Flue's client, sent again for each session the bridge opens. */
  #initialize: Record<string, unknown> | undefined;
  #session: Promise<OpenSession> | undefined;
  #opened = 0;
  /** Aborted when the session ends: a request still waiting for a hung server stops waiting. */
  readonly #ended = new AbortController();
  /** Progress tokens name this session too: request ids repeat across Flue's clients. */
  readonly #tokens = randomUUID();

  constructor(options: McpSessionOptions) {
    this.#options = options;
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    if (request.method === 'GET') return new Response(null, { status: 405 });
    if (request.method === 'DELETE') return new Response(null, { status: 200 });
    const text = await request.text();
    const message = parseRequest(text);
    const listed = this.#options.listed;
    if (message?.method === 'initialize') {
      this.#initialize = message.params ?? {};
      if (listed) return answer(message, initializeResult(listed, this.#initialize));
      return this.#openWith(request, text);
    }
    if (message?.method === 'notifications/initialized' && !this.#session) return new Response(null, { status: 202 });
    if (message?.method === 'tools/list' && listed) return answer(message, { tools: listed.tools });
    const body = message?.method === 'tools/call' ? JSON.stringify(withProgressToken(message, this.#tokens)) : text;
    const current = this.#ensure();
    const session = await current;
    const response = await this.#send(request, body, session);
    if (session.id === undefined || !(await forgotSession(response))) return response;
    // The server no longer knows the session (it restarted): a new one, and the request once more.
    await response.body?.cancel();
    await this.#drop(current);
    return this.#send(request, body, await this.#ensure());
  };

  /** Ends the server's session (`DELETE` with its id) and the standing stream. */
  async end(): Promise<void> {
    this.#ended.abort();
    const session = this.#session;
    this.#session = undefined;
    const open = await session?.catch(() => undefined);
    if (!open) return;
    open.standing.abort();
    if (open.id === undefined) return;
    const response = await this.#options.upstream(this.#options.url, { method: 'DELETE', headers: sessionHeaders(open) });
    await response.body?.cancel();
  }

  /** A session opened by Flue's own `initialize` (nothing was listed before): forwarded, and remembered. */
  async #openWith(request: Request, body: string): Promise<Response> {
    const response = await this.#options.upstream(request.url, { method: 'POST', headers: request.headers, body, signal: this.#signal(request.signal) });
    if (!response.ok) return response;
    const result = await initializeAnswer(response.clone());
    this.#session = Promise.resolve(this.#started(response.headers.get('mcp-session-id') ?? undefined, result?.protocolVersion));
    return response;
  }

  #ensure(): Promise<OpenSession> {
    this.#session ??= this.#open();
    const session = this.#session;
    session.catch(() => {
      if (this.#session === session) this.#session = undefined;
    });
    return session;
  }

  /** Forgets a session the server no longer knows (unless another request already replaced it). */
  async #drop(session: Promise<OpenSession>): Promise<void> {
    if (this.#session === session) this.#session = undefined;
    (await session.catch(() => undefined))?.standing.abort();
  }

  /** Opens a session the way an MCP client does: `initialize`, then `notifications/initialized`. */
  async #open(): Promise<OpenSession> {
    const { url, upstream } = this.#options;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const id = `eve-flue-initialize-${++this.#opened}`;
    const params = this.#initialize ?? { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'eve-flue-bridge', version: '0.1.0' } };
    const signal = this.#ended.signal;
    const response = await upstream(url, { method: 'POST', headers, signal, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params }) });
    if (!response.ok) throw new McpHttpError(response.status, await response.text().catch(() => ''));
    const result = await initializeAnswer(response);
    if (!result) throw new Error('the server answered `initialize` without a result');
    const session = this.#started(response.headers.get('mcp-session-id') ?? undefined, result.protocolVersion);
    const initialized = await upstream(url, { method: 'POST', headers: { ...headers, ...sessionHeaders(session) }, signal, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    await initialized.body?.cancel();
    return session;
  }

  /** A session is open: its standing stream (server-to-client messages) is read from now on. */
  #started(id: string | undefined, protocolVersion: string | undefined): OpenSession {
    const session: OpenSession = { id, protocolVersion, standing: new AbortController() };
    void this.#standingStream(session).catch(() => undefined);
    return session;
  }

  async #standingStream(session: OpenSession): Promise<void> {
    const response = await this.#options.upstream(this.#options.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...sessionHeaders(session) },
      signal: this.#signal(session.standing.signal),
    });
    if (!response.ok || !response.body || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      await response.body?.cancel();
      return;
    }
    await readRpcMessages(response.body, true, (message) => {
      if (message.method !== undefined && message.id !== undefined) void this.#answerServer(session, message.id, message.method).catch(() => undefined);
      else this.#options.onStreamMessage(message);
    });
  }

  /** A request of the server's (`ping`, or one the bridge does not serve, e.g. sampling): answered, so that the server does not wait. */
  async #answerServer(session: OpenSession, id: string | number, method: string): Promise<void> {
    const answer = method === 'ping' ? { result: {} } : { error: { code: -32601, message: `The client does not serve ${method}.` } };
    const response = await this.#options.upstream(this.#options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...sessionHeaders(session) },
      body: JSON.stringify({ jsonrpc: '2.0', id, ...answer }),
      signal: this.#ended.signal,
    });
    await response.body?.cancel();
  }

  #send(request: Request, body: string, session: OpenSession): Promise<Response> {
    const headers = new Headers(request.headers);
    headers.delete('mcp-session-id');
    for (const [name, value] of Object.entries(sessionHeaders(session))) headers.set(name, value);
    return this.#options.upstream(request.url, { method: 'POST', headers, body, signal: this.#signal(request.signal) });
  }

  #signal(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, this.#ended.signal]);
  }
}

/**
 * Whether an answer says the server does not know the session: 404, as the MCP spec has it, or a
 * 400 whose error says the session id is not valid (what some servers answer, e.g. the reference
 * `server-everything`).
 */
async function forgotSession(response: Response): Promise<boolean> {
  if (response.status === 404) return true;
  if (response.status !== 400) return false;
  return /session/i.test(serverMessage(await response.clone().text().catch(() => '')));
}

/** An HTTP failure of the MCP endpoint, with the server's own words. */
export class McpHttpError extends Error {
  override name = 'McpHttpError';
  readonly status: number;
  constructor(status: number, body: string) {
    super(`HTTP ${status}${serverMessage(body) ? `: ${serverMessage(body)}` : ''}`);
    this.status = status;
  }
}

/** The message in an error body (JSON-RPC error, `{error}`, or a short text), trimmed. */
function serverMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message);
    if (typeof message === 'string') return message.slice(0, 200);
  } catch {
    // Not JSON: the text itself.
  }
  return body.trim().slice(0, 200);
}

function sessionHeaders(session: OpenSession): Record<string, string> {
  return {
    ...(session.id !== undefined ? { 'mcp-session-id': session.id } : {}),
    ...(session.protocolVersion ? { 'mcp-protocol-version': session.protocolVersion } : {}),
  };
}

function parseRequest(text: string): RpcRequest | undefined {
  try {
    const message = JSON.parse(text) as unknown;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
    return typeof (message as RpcRequest).method === 'string' ? (message as RpcRequest) : undefined;
  } catch {
    return undefined;
  }
}

function withProgressToken(message: RpcRequest, prefix: string): RpcRequest {
  const meta = (message.params?._meta ?? {}) as Record<string, unknown>;
  if (meta.progressToken !== undefined || message.id === undefined) return message;
  return { ...message, params: { ...message.params, _meta: { ...meta, progressToken: `${prefix}:${message.id}` } } };
}

function answer(message: RpcRequest, result: unknown): Response {
  return Response.json({ jsonrpc: '2.0', id: message.id ?? null, result });
}

/** The opening answer from what the server listed, in the version it agreed to then (the client's own when unknown). */
function initializeResult(listed: ListedServer, params: Record<string, unknown>): Record<string, unknown> {
  return {
    protocolVersion: listed.protocolVersion ?? params.protocolVersion,
    capabilities: listed.capabilities ?? { tools: {} },
    serverInfo: listed.serverInfo ?? { name: 'mcp-server', version: '0' },
    ...(listed.instructions ? { instructions: listed.instructions } : {}),
  };
}

async function initializeAnswer(response: Response): Promise<{ protocolVersion?: string } | undefined> {
  if (!response.body) return undefined;
  let result: { protocolVersion?: string } | undefined;
  const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
  await readRpcMessages(response.body, eventStream, (message) => {
    if (message.result && message.id !== undefined) result = message.result as { protocolVersion?: string };
  }).catch(() => undefined);
  return result;
}
