/** The JSON-RPC request an MCP POST carries, as far as the bridge cares: its id, method and, for `tools/call`, the tool. */
export interface JsonRpcCall {
  id: string | number | null;
  method: string;
  /** For `tools/call`: the server's tool name. */
  toolName?: string;
  /** For `tools/call`: the arguments, as sent. */
  arguments?: unknown;
}

/** The one reader of an MCP request body, for the upstream fetch and the tool gate alike; undefined when it is not one request. */
export function parseJsonRpcCall(text: string): JsonRpcCall | undefined {
  let message: { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || typeof message.method !== 'string') return undefined;
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  const tool = message.method === 'tools/call' && typeof message.params?.name === 'string' ? { toolName: message.params.name, arguments: message.params.arguments } : {};
  return { id, method: message.method, ...tool };
}
