import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  /** The server's hints (`readOnlyHint`, ...), which approval policies read. */
  annotations?: Record<string, unknown>;
  /** The tool runs only as an MCP task (`execution.taskSupport: 'required'`), which Flue cannot call. */
  taskOnly: boolean;
}

/** Lists a server's tools with the MCP SDK, through the given fetch, following pagination. */
export async function listServerTools(url: string, upstreamFetch: typeof fetch): Promise<ListedTool[]> {
  const client = new Client({ name: 'eve-flue-bridge', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: upstreamFetch });
  await client.connect(transport);
  try {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const tool of page.tools) {
        const taskOnly = (tool as { execution?: { taskSupport?: string } }).execution?.taskSupport === 'required';
        tools.push({
          name: tool.name,
          description: tool.description ?? '',
          inputSchema: tool.inputSchema,
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
          ...(tool.annotations ? { annotations: tool.annotations } : {}),
          taskOnly,
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close();
  }
}
