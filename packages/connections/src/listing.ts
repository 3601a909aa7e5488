import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: unknown;
  /** The tool runs only as an MCP task (`execution.taskSupport: 'required'`), which Flue cannot call. */
  taskOnly: boolean;
  /** The `tools/list` entry as the server sent it. */
  definition: unknown;
}

/** A server's tools and how it introduced itself, from one listing. */
export interface ServerListing {
  tools: ListedTool[];
  capabilities?: unknown;
  serverInfo?: unknown;
  instructions?: string;
  /** The protocol version the server agreed to. */
  protocolVersion?: string;
}

/** Lists a server's tools with the MCP SDK, through the given fetch, following pagination. */
export async function listServerTools(url: string, upstreamFetch: typeof fetch): Promise<ServerListing> {
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
        tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema, taskOnly, definition: tool });
      }
      cursor = page.nextCursor;
    } while (cursor);
    const instructions = client.getInstructions();
    const protocolVersion = transport.protocolVersion;
    return {
      tools,
      capabilities: client.getServerCapabilities(),
      serverInfo: client.getServerVersion(),
      ...(instructions ? { instructions } : {}),
      ...(protocolVersion ? { protocolVersion } : {}),
    };
  } finally {
    await client.close();
  }
}
