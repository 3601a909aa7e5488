/**
 * A server written with `fastmcp` (a third-party MCP framework), as its README starts one:
 * Streamable HTTP (`httpStream`) on `PORT`, stateless, every caller's bearer token required.
 * `node test/support/fastmcp-server.ts`; prints `FastMCP ready` once it listens.
 */
import { FastMCP, UserError } from 'fastmcp';
import { z } from 'zod';

const TOKEN = process.env.FASTMCP_TOKEN!;
const server = new FastMCP<{ caller: string }>({
  name: 'Adder',
  version: '1.0.0',
  authenticate: async (request) => {
    if (request.headers.authorization !== `Bearer ${TOKEN}`) throw new Response(null, { status: 401, statusText: 'Unauthorized' });
    return { caller: 'bridge' };
  },
});
server.addTool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});
server.addTool({
  name: 'divide',
  description: 'Divides a by b.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => {
    if (b === 0) throw new UserError('Cannot divide by zero.');
    return String(a / b);
  },
});
await server.start({ transportType: 'httpStream', httpStream: { port: Number(process.env.PORT), host: '127.0.0.1', endpoint: '/mcp', stateless: true } });
console.log('FastMCP ready');
