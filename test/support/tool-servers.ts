import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { listen, type Listening } from './listen.ts';

/**
 * Tiny stateless MCP servers on one port: `POST /mcp/<tool>` offers one tool of that name, which
 * echoes its `text`; `/locked/mcp/<tool>` is the same, but only for `Bearer letmein` (else a 401).
 */
export async function startToolServers(): Promise<Listening> {
  const app = express();
  app.use('/locked', (request, response, next) => {
    if (request.headers.authorization === 'Bearer letmein') return next();
    response.status(401).set('www-authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token' });
  });
  app.post(['/mcp/:tool', '/locked/mcp/:tool'], express.json(), async (request, response) => {
    const mcp = new McpServer({ name: 'tiny', version: '1.0.0' });
    mcp.registerTool(String(request.params.tool), { description: 'Echo', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  return listen(app);
}
