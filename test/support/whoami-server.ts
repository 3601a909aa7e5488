import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { listen, type Listening } from './listen.ts';

export interface WhoamiServer extends Listening {
  /** The `Authorization` header of every `whoami` call, in order. */
  calls: string[];
}

/** A stateless MCP server at `/mcp` whose one tool, `whoami`, answers the `Authorization` header it was sent. */
export async function startWhoamiServer(): Promise<WhoamiServer> {
  const calls: string[] = [];
  const app = express();
  app.post('/mcp', express.json(), async (request, response) => {
    const mcp = new McpServer({ name: 'whoami', version: '1.0.0' });
    const authorization = request.headers.authorization ?? '(none)';
    mcp.registerTool('whoami', { description: 'Who the bridge says is calling' }, async () => {
      calls.push(authorization);
      return { content: [{ type: 'text', text: authorization }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  const listening = await listen(app);
  return { ...listening, url: `${listening.url}/mcp`, calls };
}
