import { describe, expect, test } from '@jest/globals';
import { connectMcp, invocation, pollUntil, rejection } from './mcp-client.ts';

/** A server of Eve's MCP channel: a real Eve app, or the bridge. */
export interface McpTarget {
  /** The MCP endpoint. */
  url: string;
  /** Route-auth bearer tokens of two callers. */
  tokens: { ann: string; bob: string };
  /** The issuer and scopes its `oauth` advertises. */
  oauth: { issuer: string; scopes: string[] };
}

/**
 * The checks an MCP host relies on, written once and run against Eve's own `mcpChannel` (a real
 * Eve app) and against the bridge, so that what they pin down is Eve's contract.
 */
export function describeMcpContract(label: string, target: () => McpTarget): void {
  describe(`${label}: Eve's MCP channel contract`, () => {
    test('initialize: instructions, the tools capability, no MCP session', async () => {
      const { url, tokens } = target();
      const client = await connectMcp(url, tokens.ann);
      expect(client.getInstructions()).toMatch(/^Each invocation is one durable agent task\. Call agent_start once per task/);
      expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.ann}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('mcp-session-id')).toBeNull();
      expect(await response.text()).toContain('"protocolVersion":"2025-11-25"');
      await client.close();
    });

    test('tools/list: the four agent_* tools with their schemas', async () => {
      const { url, tokens } = target();
      const client = await connectMcp(url, tokens.ann);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['agent_start', 'agent_get', 'agent_update', 'agent_cancel']);
      const start = tools[0]!;
      expect(start.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string', minLength: 1 } }, required: ['message'], additionalProperties: false });
      expect((start.outputSchema as unknown as { oneOf: { properties: { status: { const: string } } }[] }).oneOf.map((s) => s.properties.status.const)).toEqual([
        'working',
        'input_required',
        'authorization_required',
        'completed',
        'failed',
        'cancelled',
      ]);
      await client.close();
    });

    test('agent_start → working with pollAfterMs; agent_get until completed with the answer', async () => {
      const { url, tokens } = target();
      const client = await connectMcp(url, tokens.ann);
      const started = await invocation(client, 'agent_start', { message: 'hello over mcp' });
      expect(started).toEqual({ invocationId: expect.any(String), createdAt: expect.any(String), status: 'working', pollAfterMs: 1000 });
      const done = await pollUntil(client, started.invocationId, ['completed', 'failed', 'cancelled']);
      expect(done).toEqual({ invocationId: started.invocationId, createdAt: started.createdAt, status: 'completed', result: 'Echo: hello over mcp' });
      // A client that dropped its connection and came back reads the same state.
      const again = await connectMcp(url, tokens.ann);
      expect(await invocation(again, 'agent_get', { invocationId: started.invocationId })).toEqual(done);
      // Cancelling a finished invocation answers its state; answering it is a conflict.
      expect(await invocation(again, 'agent_cancel', { invocationId: started.invocationId })).toEqual(done);
      expect(await rejection(again, 'agent_update', { invocationId: started.invocationId, responses: [{ requestId: 'nope', optionId: 'approve' }] })).toEqual({
        code: 'conflict',
        message: 'Invocation is not waiting for input. Call agent_get to read the current state before answering again.',
        retryable: true,
      });
      await Promise.all([client.close(), again.close()]);
    });

    test('failed: the task failed, as a structured error naming the run and its Eve code', async () => {
      const { url, tokens } = target();
      const client = await connectMcp(url, tokens.ann);
      const { invocationId } = await invocation(client, 'agent_start', { message: '/fail' });
      const done = await pollUntil(client, invocationId, ['completed', 'failed']);
      expect(done).toEqual({
        invocationId,
        createdAt: expect.any(String),
        status: 'failed',
        error: { code: -32603, message: expect.any(String), data: { runId: invocationId, eveCode: 'MODEL_CALL_FAILED', errorId: expect.any(String) } },
      });
      await client.close();
    });

    test("another caller's invocation is not_found, as is one that never existed", async () => {
      const { url, tokens } = target();
      const ann = await connectMcp(url, tokens.ann);
      const bob = await connectMcp(url, tokens.bob);
      const { invocationId } = await invocation(ann, 'agent_start', { message: 'mine' });
      const notFound = { code: 'not_found', message: 'Invocation not found. It may have expired or belong to another caller.', retryable: false };
      expect(await rejection(bob, 'agent_get', { invocationId })).toEqual(notFound);
      expect(await rejection(bob, 'agent_cancel', { invocationId })).toEqual(notFound);
      expect(await rejection(bob, 'agent_update', { invocationId, responses: [{ requestId: 'r', optionId: 'approve' }] })).toEqual(notFound);
      expect(await rejection(ann, 'agent_get', { invocationId: 'no-such-invocation' })).toEqual(notFound);
      // Eve's rejections are not states: the SDK's callTool, which checks them against the
      // outputSchema too, throws for them (Eve's own channel and the bridge alike).
      await expect(ann.callTool({ name: 'agent_get', arguments: { invocationId: 'no-such-invocation' } })).rejects.toThrow(/does not match the tool's output schema/);
      await pollUntil(ann, invocationId, ['completed']);
      await Promise.all([ann.close(), bob.close()]);
    });

    test('limits: message 64 KiB, response text 16 KiB, 64 responses, as invalid_input; a body over 1 MiB is a JSON-RPC 413', async () => {
      const { url, tokens } = target();
      const client = await connectMcp(url, tokens.ann);
      const tooLong = await rejection(client, 'agent_start', { message: 'é'.repeat(32_769) });
      expect(tooLong).toEqual({ code: 'invalid_input', message: 'Invalid arguments for tool agent_start: message: must be at most 65536 bytes when UTF-8 encoded', retryable: false });
      expect(await rejection(client, 'agent_start', { message: '' })).toMatchObject({ code: 'invalid_input', retryable: false });
      expect(await rejection(client, 'agent_start', { message: 'x', extra: 1 })).toMatchObject({ code: 'invalid_input' });
      const id = 'any-invocation';
      expect(await rejection(client, 'agent_update', { invocationId: id, responses: [{ requestId: 'r', text: 'x'.repeat(16_385) }] })).toEqual({
        code: 'invalid_input',
        message: 'Invalid arguments for tool agent_update: responses.0.text: must be at most 16384 bytes when UTF-8 encoded',
        retryable: false,
      });
      const many = Array.from({ length: 65 }, (_, i) => ({ requestId: `r${i}`, optionId: 'approve' }));
      expect(await rejection(client, 'agent_update', { invocationId: id, responses: many })).toMatchObject({ code: 'invalid_input' });
      expect(await rejection(client, 'agent_update', { invocationId: id, responses: [] })).toMatchObject({ code: 'invalid_input' });
      // On a connection of its own: a server may close the socket of a body it refused to read.
      const big = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.ann}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent_start', arguments: { message: 'x'.repeat(1_048_576) } } }),
      });
      expect(big.status).toBe(413);
      expect(await big.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Request body too large' } });
      await client.close();
    });

    test('an unknown tool is a JSON-RPC invalid-params error', async () => {
      const { url, tokens } = target();
      const client = await connectMcp(url, tokens.ann);
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Tool no_such_tool not found/);
      await client.close();
    });

    test('stateless transport: GET and DELETE answer 405', async () => {
      const { url, tokens } = target();
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(url, { method, headers: { authorization: `Bearer ${tokens.ann}`, accept: 'text/event-stream' } });
        expect(response.status).toBe(405);
        expect(await response.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
      }
    });

    test('401: no credentials → the metadata challenge; a rejected token → invalid_token; the metadata names the issuer', async () => {
      const { url, tokens, oauth } = target();
      const metadataUrl = `${new URL(url).origin}/.well-known/oauth-protected-resource${new URL(url).pathname}`;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const anonymous = await fetch(url, { method: 'POST', headers, body });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}", scope="${oauth.scopes.join(' ')}"`);
      expect(await anonymous.json()).toEqual({ ok: false, code: 'unauthorized', error: 'Authorization is required for this route.' });
      const wrong = await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer not-${tokens.ann}` }, body });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl}", scope="${oauth.scopes.join(' ')}"`);
      const metadata = await fetch(metadataUrl, { headers: { origin: 'https://host.example' } });
      expect(metadata.status).toBe(200);
      expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
      expect(await metadata.json()).toEqual({ authorization_servers: [oauth.issuer], resource: url, scopes_supported: oauth.scopes });
      const head = await fetch(metadataUrl, { method: 'HEAD' });
      expect(head.status).toBe(200);
      const preflight = await fetch(metadataUrl, { method: 'OPTIONS', headers: { origin: 'https://host.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
      expect(preflight.headers.get('access-control-allow-headers')).toBe('mcp-protocol-version');
    });

    test('HTTP security: a cross-origin browser request is refused before anything runs', async () => {
      const { url, tokens } = target();
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.ann}`, origin: 'https://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent_start', arguments: { message: 'from a page' } } }),
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Invalid Origin: https://evil.example' } });
    });
  });
}
