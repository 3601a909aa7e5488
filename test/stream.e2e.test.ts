import { afterEach, expect, test } from '@jest/globals';
import { Client, ClientError } from 'eve/client';
import { startCompatBridge, type RunningBridge } from './support/compat-bridge.ts';
import { collect } from './support/events.ts';
import { ScriptedRuntime } from './support/scripted-runtime.ts';

const bridges: RunningBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
});

async function bridge(options: Parameters<typeof startCompatBridge>[0]): Promise<RunningBridge> {
  const started = await startCompatBridge(options);
  bridges.push(started);
  return started;
}

test('a turn longer than the lease spans several leased responses without losing or repeating an event', async () => {
  const runtime = new ScriptedRuntime();
  const running = await bridge({ runtime, stream: { heartbeatMs: 1_000, leaseMs: 150 } });
  const streamOpens: string[] = [];
  // The turn runs until the client has opened its third leased response.
  running.server.prependListener('request', (request) => {
    if (request.url?.includes('/stream') && streamOpens.push(request.url) === 3) runtime.release();
  });
  const client = new Client({ host: running.url });
  const { response } = await client.sessions.create({ message: '/hold' });
  const result = await response!.result();
  expect(result.message).toBe('Released.');
  expect(streamOpens.length).toBeGreaterThanOrEqual(3);
  expect(streamOpens.slice(1).every((url) => /startIndex=\d+/.test(url) && url.includes('streamControlVersion=1'))).toBe(true);
  const indexes = result.events.map((e) => (e as unknown as { streamIndex: number }).streamIndex);
  expect(indexes).toEqual(indexes.map((_, i) => i));
  expect(new Set(result.events.map((e) => e.meta!.id)).size).toBe(result.events.length);
});

test('a quiet stream carries heartbeat lines', async () => {
  const running = await bridge({ stream: { heartbeatMs: 100, leaseMs: 60_000 } });
  const created = (await (await fetch(`${running.url}/eve/v1/session`, { method: 'POST' })).json()) as { sessionId: string };
  const response = await fetch(`${running.url}/eve/v1/session/${created.sessionId}/stream`);
  expect(response.headers.get('x-eve-stream-version')).toBe('26');
  const reader = response.body!.getReader();
  // The session has no events: until three heartbeats arrive, nothing but heartbeat lines may.
  let received = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    received += new TextDecoder().decode(chunk.value);
    if (received.split('\n').length > 3) break;
  }
  await reader.cancel();
  expect(received).toMatch(/^\n{3,}$/);
});

test('a stream past retention answers 410 session_expired', async () => {
  let now = Date.now();
  const running = await bridge({ retentionMs: 60_000, clock: () => now });
  const client = new Client({ host: running.url });
  const { session, response } = await client.sessions.create({ message: 'short-lived' });
  await response!.result();
  await session.reset();
  expect((await collect(session.stream({ startIndex: 0, follow: false }))).at(-1)?.type).toBe('session.completed');
  now += 61_000;
  const error = await collect(session.stream({ startIndex: 0, follow: false })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ClientError);
  expect((error as ClientError).status).toBe(410);
  expect((error as ClientError).code).toBe('session_expired');
});

test('create-once: the same operationId from the same caller returns the same session', async () => {
  const { bearerTokens } = await import('@eve-flue/compat-server');
  const running = await bridge({ auth: bearerTokens({ 'operation-token-123456': 'ops' }) });
  const post = () =>
    fetch(`${running.url}/eve/v1/session`, {
      method: 'POST',
      headers: { authorization: 'Bearer operation-token-123456', 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'once', operationId: 'order-42' }),
    }).then((r) => r.json() as Promise<{ sessionId: string }>);
  const first = await post();
  const second = await post();
  expect(second.sessionId).toBe(first.sessionId);
  const client = new Client({ host: running.url, auth: { bearer: 'operation-token-123456' } });
  const events = await collect(client.sessions.attach(first.sessionId).stream({ startIndex: 0, follow: false }));
  expect(events.filter((e) => e.type === 'message.received')).toHaveLength(1);
});
