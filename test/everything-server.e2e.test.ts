import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, type ClientSession } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, type ApprovalCall, type CredentialContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { collect, flueNamesIn, readUntil } from './support/events.ts';
import { recordingLogger } from './support/logs.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { startEverythingServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// The real MCP reference server, started by the test, behind a proxy that records what reaches it.
const ROUTE = { ann: 'route-token-of-ann-0123456789', bob: 'route-token-of-bob-0123456789' };
const upstreamToken = (principal: string) => `upstream-secret-of-${principal}-4711`;
const STATIC_TOKEN = 'upstream-secret-static-0815';
const logger = recordingLogger();
let everything: ThirdPartyServer;
let proxy: RecordingProxy;
let bridge: DemoBridge;
const journals: unknown[][] = [];
const policyCalls: ApprovalCall[] = [];

type AnyEvent = { type: string; data: Record<string, unknown> };

beforeAll(async () => {
  everything = await startEverythingServer();
  proxy = await startRecordingProxy(new URL(everything.url).origin);
  const url = `${proxy.url}/mcp`;
  const token = ({ principal }: CredentialContext) => (principal ? upstreamToken(principal) : '');
  bridge = await startDemoBridge(
    {
      auth: bearerTokens({ [ROUTE.ann]: 'ann', [ROUTE.bob]: 'bob' }),
      connections: [
        defineFlueConnection({ name: 'everything', url, auth: { type: 'bearer', token }, headers: { 'X-Caller-Session': ({ sessionId }) => sessionId ?? 'discovery' } }),
        defineFlueConnection({ name: 'members', url, requiresPrincipal: true, tools: ['echo'] }),
        defineFlueConnection({ name: 'fixed', url, tools: ['echo'], auth: { type: 'bearer', token: STATIC_TOKEN } }),
        defineFlueConnection({
          name: 'gated',
          url,
          tools: ['echo', 'get-sum'],
          approval: (call) => {
            policyCalls.push(call);
            if (call.toolName === 'connection__gated__get-sum') return Number(call.input?.a) > 100 ? 'denied' : 'not-applicable';
            return call.annotations?.readOnlyHint === true ? 'user-approval' : 'denied';
          },
        }),
      ],
    },
    logger,
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await proxy?.close();
  await everything?.close();
  // Eve names, always: over every event these tests read.
  expect(flueNamesIn(journals)).toEqual([]);
});

const clientOf = (who: keyof typeof ROUTE) => new Client({ host: bridge.url, auth: { bearer: ROUTE[who] } });

async function ask(client: Client, message: string) {
  const { session, response } = await client.sessions.create({ message });
  const result = await response!.result();
  journals.push(result.events as unknown[]);
  return { session, result, events: result.events as unknown as AnyEvent[] };
}

/** Resolves once `condition` holds (checked as the event loop turns), failing after 10 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const toolResult = (events: AnyEvent[]) => events.find((e) => e.type === 'action.result')?.data as { status: string; result: { toolName: string; output: unknown } };

describe('server-everything over Streamable HTTP', () => {
  test('echo and sum run under their Eve names', async () => {
    const echo = await ask(clientOf('ann'), '/tool connection__everything__echo {"message":"hi there"}');
    expect(toolResult(echo.events)).toMatchObject({ status: 'completed', result: { toolName: 'connection__everything__echo' } });
    expect(echo.result.message).toBe('Tool connection__everything__echo returned: Echo: hi there');
    const sum = await ask(clientOf('ann'), '/tool connection__everything__get-sum {"a":2,"b":40}');
    expect(sum.result.message).toContain('42');
  });

  test('each caller’s bearer token reaches the server, and nowhere else', async () => {
    const before = proxy.requests.length;
    const { session } = await ask(clientOf('ann'), '/tool connection__everything__echo {"message":"from ann"}');
    await ask(clientOf('bob'), '/tool connection__everything__echo {"message":"from bob"}');
    const calls = proxy.requests.slice(before).filter((r) => r.body.includes('"tools/call"'));
    const seen = Object.fromEntries(calls.map((r) => [JSON.parse(r.body).params.arguments.message, r.headers.authorization]));
    expect(seen).toEqual({ 'from ann': `Bearer ${upstreamToken('ann')}`, 'from bob': `Bearer ${upstreamToken('bob')}` });
    expect(calls.map((r) => r.headers['x-caller-session'])).toContain(session.state.sessionId);
    // Route credentials stay with the bridge.
    expect(JSON.stringify(proxy.requests.map((r) => r.headers))).not.toContain(ROUTE.ann);

    const journal = await (await fetch(`${bridge.url}/eve/v1/session/${session.state.sessionId}/stream?follow=false`, { headers: { authorization: `Bearer ${ROUTE.ann}` } })).text();
    const status = await (await fetch(`${bridge.url}/eve/v1/connections`, { headers: { authorization: `Bearer ${ROUTE.ann}` } })).text();
    const info = await (await fetch(`${bridge.url}/eve/v1/info`, { headers: { authorization: `Bearer ${ROUTE.ann}` } })).text();
    for (const [place, text] of Object.entries({ journal, status, info, logs: logger.text() })) {
      expect([place, text.includes('upstream-secret-of')]).toEqual([place, false]);
    }
  });

  test('a static bearer token reaches the server on every request, and nowhere else', async () => {
    const before = proxy.requests.length;
    const { session, result, events } = await ask(clientOf('bob'), '/tool connection__fixed__echo {"message":"fixed key"}');
    expect(result.message).toBe('Tool connection__fixed__echo returned: Echo: fixed key');
    const mcpSession = proxy.requests.find((r) => r.body.includes('fixed key'))!.headers['mcp-session-id'];
    const mine = proxy.requests.slice(before).filter((r) => r.headers['mcp-session-id'] === mcpSession);
    expect(mine.length).toBeGreaterThan(1);
    expect(new Set(mine.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${STATIC_TOKEN}`]));
    const journal = await (await fetch(`${bridge.url}/eve/v1/session/${session.state.sessionId}/stream?follow=false`, { headers: { authorization: `Bearer ${ROUTE.bob}` } })).text();
    for (const [place, text] of Object.entries({ journal, events: JSON.stringify(events), logs: logger.text() })) {
      expect([place, text.includes(STATIC_TOKEN)]).toEqual([place, false]);
    }
  });

  test('a long call can be cancelled, and the session goes on', async () => {
    const client = clientOf('ann');
    const { session, response } = await client.sessions.create({ message: '/tool connection__everything__trigger-long-running-operation {"duration":30,"steps":30}' });
    await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'actions.requested');
    await session.cancel();
    const result = await response!.result();
    journals.push(result.events as unknown[]);
    expect(result.events.map((e) => e.type)).toContain('turn.cancelled');
    const next = await (await session.send('/tool connection__everything__echo {"message":"still here"}')).result();
    expect(next.message).toBe('Tool connection__everything__echo returned: Echo: still here');
  });

  test('reset ends the session’s MCP sessions upstream', async () => {
    const { session } = await ask(clientOf('ann'), '/tool connection__everything__echo {"message":"soon reset"}');
    const call = proxy.requests.find((r) => r.body.includes('soon reset'))!;
    const mcpSession = call.headers['mcp-session-id'];
    expect(typeof mcpSession).toBe('string');
    expect(await session.reset()).toMatchObject({ status: 'reset' });
    const ended = proxy.requests.filter((r) => r.method === 'DELETE').map((r) => r.headers['mcp-session-id']);
    expect(ended).toContain(mcpSession);
  });
});

test('the server’s log notifications reach the bridge log under the connection’s name', async () => {
  const { result } = await ask(clientOf('ann'), '/tool connection__everything__toggle-simulated-logging {}');
  expect(result.message).toContain('Started simulated');
  // The server sends its first log message at once, on the session's standing stream.
  await until(() => logger.entries.some((e) => e.message === 'MCP server log'));
  expect(logger.entries.find((e) => e.message === 'MCP server log')?.fields).toMatchObject({ connection: 'everything', serverLevel: expect.any(String), data: expect.stringMatching(/message/) });
  // One `level` per log line: the bridge's own.
  expect(logger.entries.find((e) => e.message === 'MCP server log')?.fields).not.toHaveProperty('level');
});

test('each call carries a progressToken: the server’s progress reaches the bridge log', async () => {
  const before = proxy.requests.length;
  const logged = logger.entries.length;
  const { result } = await ask(clientOf('ann'), '/tool connection__everything__trigger-long-running-operation {"duration":0.2,"steps":2}');
  expect(result.message).toContain('Long running operation completed');
  const call = proxy.requests.slice(before).find((r) => r.body.includes('"tools/call"'))!;
  const { progressToken } = JSON.parse(call.body).params._meta;
  expect(progressToken).toBeDefined();
  // This call's progress: the cancelled call above may still report its own.
  const progress = () => logger.entries.slice(logged).filter((e) => e.message === 'MCP tool progress' && (e.fields as { progressToken?: unknown }).progressToken === progressToken).map((e) => e.fields);
  await until(() => progress().length >= 2);
  expect(progress()).toEqual([expect.objectContaining({ connection: 'everything', progress: 1, total: 2 }), expect.objectContaining({ connection: 'everything', progress: 2, total: 2 })]);
});

test('the status names the task-only tool it does not offer, and why', async () => {
  const status = (await (await fetch(`${bridge.url}/eve/v1/connections`, { headers: { authorization: `Bearer ${ROUTE.ann}` } })).json()) as {
    connections: { name: string; state: string; tools: string[]; missing: string[] }[];
  };
  const everythingStatus = status.connections.find((c) => c.name === 'everything')!;
  expect(everythingStatus.state).toBe('ready');
  expect(everythingStatus.tools).not.toContain('connection__everything__simulate-research-query');
  expect(everythingStatus.missing).toEqual([expect.stringMatching(/^tool "simulate-research-query" is not offered: it runs only as an MCP task/)]);
});

describe('results intact', () => {
  test('an image arrives in action.result with its bytes; the model still gets Flue’s text', async () => {
    const { events, result } = await ask(clientOf('ann'), '/tool connection__everything__get-tiny-image {}');
    const output = toolResult(events).result.output as { type: string; data?: string; mimeType?: string }[];
    const image = output.find((block) => block.type === 'image')!;
    expect(image.mimeType).toBe('image/png');
    const bytes = Buffer.from(image.data!, 'base64');
    expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(bytes.length).toBeGreaterThan(1000);
    expect(result.message).toMatch(/\[Image: image\/png, \d+ base64 chars\]/);
  });

  test('structured content appears once, as the output', async () => {
    const { events } = await ask(clientOf('ann'), '/tool connection__everything__get-structured-content {"location":"Chicago"}');
    expect(toolResult(events).result.output).toEqual({ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) });
  });
});

describe('approval gates', () => {
  const waitForApproval = async (session: ClientSession) => {
    const seen = (await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'turn.waiting')) as unknown as AnyEvent[];
    const requested = seen.find((e) => e.type === 'input.requested')!.data as { requests: { requestId: string; kind: string; action: { callId: string; toolName: string; input: unknown } }[] };
    const asked = seen.find((e) => e.type === 'actions.requested')!.data as { actions: { callId: string }[] };
    return { request: requested.requests[0]!, callId: asked.actions[0]!.callId };
  };

  test('approved: the call runs and the turn goes on', async () => {
    const { session } = await clientOf('ann').sessions.create({ message: '/tool connection__gated__echo {"message":"may I"}' });
    const { request, callId } = await waitForApproval(session);
    expect(request).toMatchObject({ kind: 'tool-approval', action: { callId, toolName: 'connection__gated__echo', input: { message: 'may I' } } });
    expect(policyCalls.at(-1)).toEqual({ toolName: 'connection__gated__echo', input: { message: 'may I' }, annotations: expect.objectContaining({ readOnlyHint: true, destructiveHint: false }) });
    const answered = await (await session.respond([{ requestId: request.requestId, optionId: 'approve' }])).result();
    journals.push(answered.events as unknown[]);
    expect(answered.message).toBe('Tool connection__gated__echo returned: Echo: may I');
  });

  test('denied by the person: the model gets a failed call with TOOL_EXECUTION_DENIED, nothing reaches the server', async () => {
    const { session } = await clientOf('ann').sessions.create({ message: '/tool connection__gated__echo {"message":"refuse me"}' });
    const { request } = await waitForApproval(session);
    const answered = await (await session.respond([{ requestId: request.requestId, optionId: 'deny' }])).result();
    journals.push(answered.events as unknown[]);
    const events = answered.events as unknown as AnyEvent[];
    expect(events.find((e) => e.type === 'action.result')?.data).toMatchObject({ status: 'failed', error: { code: 'TOOL_EXECUTION_DENIED' } });
    expect(answered.message).toBe('Tool connection__gated__echo returned: The person did not approve this call.');
    expect(answered.status).toBe('waiting');
    expect(proxy.requests.some((r) => r.body.includes('refuse me'))).toBe(false);
  });

  test('denied by the policy: no one is asked', async () => {
    const { events, result } = await ask(clientOf('ann'), '/tool connection__gated__get-sum {"a":500,"b":1}');
    expect(events.map((e) => e.type)).not.toContain('input.requested');
    expect(toolResult(events)).toMatchObject({ status: 'failed' });
    expect(result.message).toBe('Tool connection__gated__get-sum returned: The approval policy of gated denied this call.');
    const allowed = await ask(clientOf('ann'), '/tool connection__gated__get-sum {"a":2,"b":3}');
    expect(allowed.result.message).toContain('5');
  });

  test('steered over: another message withdraws the approval, the call does not run, the turn answers the new message', async () => {
    const { session, response } = await clientOf('ann').sessions.create({ message: '/tool connection__gated__echo {"message":"steered away"}' });
    await waitForApproval(session);
    const result = await (await session.send('never mind')).result();
    await response!.result();
    const events = (await collect(session.stream({ startIndex: 0, follow: false }))) as unknown as AnyEvent[];
    journals.push(events);
    expect(events.find((e) => e.type === 'input.resolved')?.data).toMatchObject({ resolutions: [expect.objectContaining({ outcome: 'ignored' })] });
    expect(events.find((e) => e.type === 'action.result')?.data).toMatchObject({ error: { code: 'TOOL_EXECUTION_DENIED' } });
    expect(result.message).toBe('Echo: never mind');
    expect(proxy.requests.some((r) => r.body.includes('steered away'))).toBe(false);
  });
});

describe('requiresPrincipal', () => {
  test('a caller with a principal sees the connection’s tools (anonymous turns: requires-principal.e2e.test.ts)', async () => {
    const member = await ask(clientOf('bob'), '/tool connection__members__echo {"message":"member"}');
    expect(member.result.message).toBe('Tool connection__members__echo returned: Echo: member');
  });
});

test('every event of a session carries Eve names only', async () => {
  const { session } = await ask(clientOf('ann'), '/tool connection__everything__get-sum {"a":1,"b":1}');
  journals.push(await collect(session.stream({ startIndex: 0, follow: false })));
});
