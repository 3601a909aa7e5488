import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** An invocation state as `agent_*` tools answer it (structuredContent). */
export type Invocation = {
  invocationId: string;
  createdAt: string;
  status: 'working' | 'input_required' | 'authorization_required' | 'completed' | 'failed' | 'cancelled';
  pollAfterMs?: number;
  result?: unknown;
  inputRequests?: Record<string, { requestId: string; kind: string; prompt: string; action: { toolName: string; input: unknown; callId: string }; options?: { id: string }[] }>;
  authorizations?: { name: string; description: string; authorization?: { url?: string; displayName?: string }; webhookUrl?: string }[];
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

/**
 * The MCP SDK's own client over Streamable HTTP, with a bearer token when given. It lists the
 * tools once, as a host does: from then on the SDK checks every `structuredContent` it gets
 * against the tool's `outputSchema`, and a state that does not match fails the call.
 */
export async function connectMcp(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'eve-flue-bridge-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
  await client.connect(transport);
  await client.listTools();
  return client;
}

/**
 * A `tools/call` whose result is not checked against the tool's `outputSchema`. The SDK's
 * `callTool` checks an `isError` result's `structuredContent` too, and Eve's rejections
 * (`{ error: { code, ... } }`, which Eve's own channel answers as well) are not a state: a host on
 * this SDK sees them as a thrown -32602 unless it reads the raw result, as this does.
 */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema);
}

/** A call the server accepted, through the SDK's `callTool` (schema-checked): its state, the same as text and as structuredContent. */
export async function invocation(client: Client, name: string, args: Record<string, unknown>): Promise<Invocation> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} was rejected: ${JSON.stringify(result.structuredContent)}`);
  const text = (result.content[0] as { type: 'text'; text: string }).text;
  if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(result.structuredContent)) throw new Error(`${name}: text and structuredContent differ`);
  return result.structuredContent as Invocation;
}

/** A call the server rejected: its `structuredContent.error`. */
export async function rejection(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; retryable: boolean; errorId?: string }> {
  const result = await callTool(client, name, args);
  if (!result.isError) throw new Error(`${name} was not rejected: ${JSON.stringify(result.structuredContent)}`);
  return (result.structuredContent as { error: { code: string; message: string; retryable: boolean } }).error;
}

/**
 * Polls `agent_get` as the channel's instructions say, waiting `pollAfterMs` between calls, until
 * the status is one of `statuses`; fails after `timeoutMs`.
 */
export async function pollUntil(client: Client, invocationId: string, statuses: readonly Invocation['status'][], timeoutMs = 20_000): Promise<Invocation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await invocation(client, 'agent_get', { invocationId });
    if (statuses.includes(state.status)) return state;
    if (Date.now() > deadline) throw new Error(`invocation still ${state.status}: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, state.pollAfterMs ?? 1_000));
  }
}
