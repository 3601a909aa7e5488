import { expect, test } from '@jest/globals';
import { McpSession } from '../src/mcp-session.ts';

const URL_ = 'http://mcp.test/mcp';
type Seen = { method: string; rpc?: string; session: string | null; body?: Record<string, unknown> };

/** A stateful server that forgets its sessions when `restart()` is called. */
function fakeServer() {
  const seen: Seen[] = [];
  let sessions = new Set<string>();
  let next = 0;
  const upstream: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const session = request.headers.get('mcp-session-id');
    const body = request.method === 'POST' ? (JSON.parse(await request.text()) as Record<string, unknown>) : undefined;
    seen.push({ method: request.method, ...(body ? { rpc: String(body.method ?? 'answer'), body } : {}), session });
    if (body?.method === 'initialize') {
      const id = `s${++next}`;
      sessions.add(id);
      return Response.json({ jsonrpc: '2.0', id: body.id, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '1' } } }, { headers: { 'mcp-session-id': id } });
    }
    if (!session || !sessions.has(session)) return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
    if (request.method === 'GET') return new Response(null, { status: 405 });
    if (body?.method === 'notifications/initialized') return new Response(null, { status: 202 });
    return Response.json({ jsonrpc: '2.0', id: body?.id, result: { content: [{ type: 'text', text: 'ok' }] } });
  };
  return { seen, upstream, restart: () => (sessions = new Set()) };
}

const post = (session: McpSession, body: Record<string, unknown>) =>
  session.fetch(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', ...body }) });
const listed = { tools: [{ name: 'greet', inputSchema: { type: 'object' } }], protocolVersion: '2025-03-26' };

test('opening on a listing contacts nobody; the first call opens the session, with a progressToken', async () => {
  const server = fakeServer();
  const session = new McpSession({ url: URL_, upstream: server.upstream, listed, onStreamMessage: () => undefined });
  const init = await (await post(session, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flue', version: '2' } } })).json();
  expect(init).toMatchObject({ id: 1, result: { protocolVersion: '2025-03-26' } });
  expect((await post(session, { method: 'notifications/initialized' })).status).toBe(202);
  expect(await (await post(session, { id: 2, method: 'tools/list' })).json()).toMatchObject({ result: { tools: listed.tools } });
  expect(server.seen).toEqual([]);

  expect(await (await post(session, { id: 3, method: 'tools/call', params: { name: 'greet', arguments: {} } })).json()).toMatchObject({ id: 3, result: {} });
  const posts = server.seen.filter((s) => s.method === 'POST');
  expect(posts.map((s) => s.rpc)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
  expect(posts[2]).toMatchObject({ session: 's1', body: { params: { _meta: { progressToken: expect.stringMatching(/:3$/) } } } });
  await session.end();
  expect(server.seen.at(-1)).toMatchObject({ method: 'DELETE', session: 's1' });
});

test('a 404 for the session: a new session, and the request once more', async () => {
  const server = fakeServer();
  const session = new McpSession({ url: URL_, upstream: server.upstream, listed, onStreamMessage: () => undefined });
  await post(session, { id: 1, method: 'tools/call', params: { name: 'greet', arguments: {} } });
  server.restart();
  const answer = await post(session, { id: 2, method: 'tools/call', params: { name: 'greet', arguments: {} } });
  expect(answer.status).toBe(200);
  const calls = server.seen.filter((s) => s.rpc === 'tools/call').map((s) => s.session);
  expect(calls).toEqual(['s1', 's1', 's2']);
  await session.end();
});
