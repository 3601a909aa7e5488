import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, type CredentialContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { collect, flueNamesIn, readUntil } from './support/events.ts';
import { recordingLogger } from './support/logs.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { startEverythingServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// The real MCP reference server, started by the test, behind a proxy that records what reaches it.
const ROUTE = { ann: 'route-token-of-ann-0123456789', bob: 'route-token-of-bob-0123456789' };
const upstreamToken = (principal: string) => `upstream-secret-of-${principal}-4711`;
const logger = recordingLogger();
let everything: ThirdPartyServer;
let proxy: RecordingProxy;
let bridge: DemoBridge;
const journals: unknown[][] = [];

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
