import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection } from '@eve-flue/connections';
import { demoConnections, startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';
import { connectMcp, invocation, pollUntil, rejection } from './support/mcp-client.ts';
import { describeMcpContract } from './support/mcp-contract.ts';

// A real Flue agent (scripted model) behind the bridge, a real MCP server mounted as `demo` and,
// gated by an approval, as `gated`; driven by the MCP SDK's own client.
const TOKENS = { ann: 'mcp-route-token-of-ann-0123', bob: 'mcp-route-token-of-bob-0123' };
const SCOPES = ['agent:invoke'];
const logger = recordingLogger();
let bridge: DemoBridge;
let issuer: string;

beforeAll(async () => {
  bridge = await startDemoBridge(
    (demo) => {
      issuer = demo.authorizationServer.issuer;
      return {
        auth: bearerTokens({ [TOKENS.ann]: 'ann', [TOKENS.bob]: 'bob' }),
        connections: [...demoConnections(demo), defineFlueConnection({ name: 'gated', url: demo.mcpUrl, tools: ['echo'], approval: 'always' })],
        mcp: { oauth: { issuer, scopes: SCOPES } },
      };
    },
    logger,
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close();
});

const endpoint = () => `${bridge.url}/eve/v1/mcp`;

describeMcpContract('the bridge', () => ({ url: endpoint(), tokens: TOKENS, oauth: { issuer, scopes: SCOPES } }));

describe('invocations on the bridge: one Eve session each', () => {
  test('the invocation is a session of its caller: the Eve stream shows the same turn', async () => {
    const client = await connectMcp(endpoint(), TOKENS.ann);
    const { invocationId } = await invocation(client, 'agent_start', { message: 'as a session' });
    await pollUntil(client, invocationId, ['completed']);
    const stream = await fetch(`${bridge.url}/eve/v1/session/${invocationId}/stream?follow=false`, { headers: { authorization: `Bearer ${TOKENS.ann}` } });
    const types = (await stream.text()).trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types).toEqual(expect.arrayContaining(['session.started', 'turn.started', 'message.received', 'message.completed', 'turn.completed', 'session.waiting']));
    await client.close();
  });

  test('cancel: a long turn ends cancelled', async () => {
    const client = await connectMcp(endpoint(), TOKENS.ann);
    const { invocationId } = await invocation(client, 'agent_start', { message: '/sleep 30000' });
    const cancelling = await invocation(client, 'agent_cancel', { invocationId });
    expect(['working', 'cancelled']).toContain(cancelling.status);
    const done = await pollUntil(client, invocationId, ['completed', 'failed', 'cancelled']);
    expect(done).toEqual({ invocationId, createdAt: expect.any(String), status: 'cancelled' });
    // Cancelling again is safe and answers the terminal state.
    expect(await invocation(client, 'agent_cancel', { invocationId })).toEqual(done);
    await client.close();
  });

  test('approval: input_required with Eve-keyed requests, answered by agent_update, then completed', async () => {
    const client = await connectMcp(endpoint(), TOKENS.ann);
    const { invocationId } = await invocation(client, 'agent_start', { message: '/tool connection__gated__echo {"text":"may I"}' });
    const waiting = await pollUntil(client, invocationId, ['input_required', 'completed', 'failed']);
    expect(waiting.status).toBe('input_required');
    const [[requestId, request]] = Object.entries(waiting.inputRequests!) as [[string, NonNullable<typeof waiting.inputRequests>[string]]];
    expect(requestId).toMatch(/^[0-9a-f]{64}$/);
    expect(request).toMatchObject({ requestId, kind: 'tool-approval', action: { kind: 'tool-call', toolName: 'connection__gated__echo', input: { text: 'may I' } } });
    expect(request.options?.map((o) => o.id)).toContain('approve');
    // A partial or unknown batch is a conflict, and changes nothing.
    expect(await rejection(client, 'agent_update', { invocationId, responses: [{ requestId: 'f'.repeat(64), optionId: 'approve' }] })).toMatchObject({ code: 'conflict', retryable: true });
    expect(await rejection(client, 'agent_update', { invocationId, responses: [{ requestId, optionId: 'approve' }, { requestId, optionId: 'approve' }] })).toMatchObject({ code: 'conflict' });
    const answers = [{ requestId, optionId: 'approve' }];
    expect(await invocation(client, 'agent_update', { invocationId, responses: answers })).toMatchObject({ invocationId, status: 'working', pollAfterMs: 1000 });
    // The same answers again are safe; different ones for the answered batch are a conflict.
    expect((await invocation(client, 'agent_update', { invocationId, responses: answers })).invocationId).toBe(invocationId);
    expect(await rejection(client, 'agent_update', { invocationId, responses: [{ requestId, optionId: 'deny' }] })).toMatchObject({ code: 'conflict' });
    const done = await pollUntil(client, invocationId, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', result: 'Tool connection__gated__echo returned: may I' });
    await client.close();
  });

  test('malformed requests get JSON-RPC errors with a 4xx, never a 500', async () => {
    const post = (body: string, contentType = 'application/json') =>
      fetch(endpoint(), { method: 'POST', headers: { authorization: `Bearer ${TOKENS.ann}`, 'content-type': contentType, accept: 'application/json, text/event-stream' }, body });
    const cases: [Response, number][] = [
      [await post('{"jsonrpc":'), 400],
      [await post('{}', 'text/plain'), 415],
      [await post('['.repeat(100) + ']'.repeat(100)), 400],
    ];
    for (const [response, status] of cases) {
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
    }
    // Well-formed JSON-RPC with params the protocol rejects: the MCP SDK's JSON-RPC error, in a 200.
    const badParams = await post('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent_start","arguments":"nope"}}');
    expect(badParams.status).toBe(200);
    expect(await badParams.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: expect.any(Number) } });
    expect(logger.entries.filter((entry) => entry.level === 'error')).toEqual([]);
  });

  test('an invocation stays readable after the connection closed mid-work', async () => {
    const first = await connectMcp(endpoint(), TOKENS.bob);
    const { invocationId } = await invocation(first, 'agent_start', { message: '/sleep 1500' });
    await first.close();
    const later = await connectMcp(endpoint(), TOKENS.bob);
    const done = await pollUntil(later, invocationId, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe('completed');
    await later.close();
  });
});
