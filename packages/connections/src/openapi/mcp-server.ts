/**
 * An OpenAPI connection as an MCP server inside the bridge: a `fetch` that answers MCP requests
 * itself (the MCP SDK's server, stateless, JSON answers), its tools the API's operations. Flue
 * mounts it like any MCP connection, so listing, status, approval gates, filters, provided
 * arguments and results are the MCP connections' own; only the operation's HTTP request leaves
 * the bridge, through the upstream fetch that carries the connection's credential and sign-in.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isToolErrorAnswer } from '../auth/authorizer.ts';
import { credentialHeaders } from '../credentials.ts';
import type { CredentialContext, FlueConnectionDefinition, OpenAPISource } from '../definition.ts';
import { createUpstreamFetch, type UpstreamAuthorizer } from '../upstream-fetch.ts';
import { baseUrlOf, checkTransport, dereference, fetchDocument } from './document.ts';
import { operationsOf, type Operation } from './operations.ts';
import { operationRequest, operationResult } from './request.ts';

/** An API ready to call: where it lives and its operations by tool name. */
interface LoadedApi {
  baseUrl: string;
  operations: Map<string, Operation>;
}

export interface OpenAPIServerOptions {
  timeoutMs: number;
  /** Whom the credentials are resolved for. */
  context: () => CredentialContext;
  authorizer?: UpstreamAuthorizer;
}

type OpenAPIConnection = Readonly<FlueConnectionDefinition> & { openapi: Readonly<OpenAPISource> };

/** The `fetch` Flue's MCP client talks to for an OpenAPI connection. */
export function openApiServerFetch(definition: OpenAPIConnection, options: OpenAPIServerOptions): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    // Stateless: no standing stream and no session to end.
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
    const server = new Server({ name: `openapi-${definition.name}`, version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const api = await loadApi(definition, options.timeoutMs);
      return { tools: [...api.operations.values()].map((op) => ({ name: op.toolName, description: op.description, inputSchema: op.inputSchema as { type: 'object' } })) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      try {
        return await callOperation(definition, options, call.params.name, call.params.arguments ?? {}, extra.requestId, extra.signal);
      } catch (error) {
        return { isError: true, content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }] };
      }
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  };
}

async function callOperation(
  definition: OpenAPIConnection,
  options: OpenAPIServerOptions,
  toolName: string,
  args: Record<string, unknown>,
  requestId: string | number,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const api = await loadApi(definition, options.timeoutMs);
  const operation = api.operations.get(toolName);
  if (!operation) throw new Error(`Tool "${toolName}" not found in connection "${definition.name}".`);
  const request = operationRequest(definition.name, api.baseUrl, operation, args, await credentialHeaders(definition, options.context()));
  // The request's headers (credential, cookies) travel as the connection's own: the upstream
  // fetch removes credentials from the request it is handed.
  const send = createUpstreamFetch({
    timeoutMs: options.timeoutMs,
    headers: async () => request.headers,
    call: { id: requestId, method: 'tools/call', toolName },
    ...(options.authorizer ? { authorizer: options.authorizer } : {}),
  });
  const response = await send(request.url, { method: request.method, signal, ...(request.body !== undefined ? { body: request.body } : {}) });
  if (isToolErrorAnswer(response)) return ((await response.json()) as { result: CallToolResult }).result;
  const result = await operationResult(response);
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: { ...result } };
}

const loaded = new WeakMap<object, Promise<LoadedApi>>();

/** The connection's API, loaded once; a load that failed is tried again at the next use. */
function loadApi(definition: OpenAPIConnection, timeoutMs: number): Promise<LoadedApi> {
  let loading = loaded.get(definition.openapi);
  if (!loading) {
    loading = load(definition, timeoutMs);
    loaded.set(definition.openapi, loading);
    loading.catch(() => loaded.delete(definition.openapi));
  }
  return loading;
}

async function load(definition: OpenAPIConnection, timeoutMs: number): Promise<LoadedApi> {
  const { spec, baseUrl: declared } = definition.openapi;
  const specUrl = typeof spec === 'string' ? spec : undefined;
  const document = await dereference(typeof spec === 'string' ? await fetchDocument(spec, definition.name, timeoutMs) : spec, definition.name);
  const baseUrl = declared ?? baseUrlOf(document, specUrl);
  if (baseUrl === undefined) throw new Error(`OpenAPI connection "${definition.name}" has no base URL: set \`baseUrl\`, or declare an absolute \`servers\` entry (Swagger 2: \`host\`) in the spec.`);
  checkTransport(baseUrl, (problem) => {
    throw new Error(`OpenAPI connection "${definition.name}": its base URL ${problem}`);
  });
  return { baseUrl, operations: new Map(operationsOf(document).map((operation) => [operation.toolName, operation])) };
}
