import express, { type Express } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** Builds the demo MCP server's tools; a fresh server per request keeps it stateless. */
function demoServer(): McpServer {
  const server = new McpServer({ name: 'eve-flue-demo', version: '0.1.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: { text: z.string().describe('The text to echo back') } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

/** The embedded demo's MCP server: Streamable HTTP at `/mcp`, stateless. */
export function createDemoMcpApp(): Express {
  const app = express();
  app.post('/mcp', express.json(), async (request, response) => {
    const server = demoServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  const notAllowed: express.RequestHandler = (_request, response) => {
    response.status(405).set('allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
  return app;
}
