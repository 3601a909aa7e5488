import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startCallbackReceiver, type CallbackReceiver } from './support/callback-receiver.ts';
import { startCliBridge, untilLogged, type CliBridge } from './support/cli-bridge.ts';
import { streamUntil } from './support/ndjson.ts';

/**
 * The receiver side of Eve's remote-agent protocol against a running bridge process, with a
 * parent's callback route the test can take down: what a parent sends is checked as Eve checks
 * it, and a callback owed survives a restart and is delivered once.
 */
const CONFIG = fileURLToPath(new URL('./support/remote-agent.config.ts', import.meta.url));
let dataDir: string;
let receiver: CallbackReceiver;
/** Where the checks of the first test send their callbacks, apart from the durability test's. */
let sink: CallbackReceiver;
const bridges: CliBridge[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-remote-'));
  receiver = await startCallbackReceiver();
  sink = await startCallbackReceiver();
});

afterAll(async () => {
  await Promise.all(bridges.map((b) => b.kill()));
  await receiver.close();
  await sink.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(): Promise<CliBridge> {
  const bridge = await startCliBridge({ DATA_DIR: dataDir }, ['start', '--config', CONFIG]);
  bridges.push(bridge);
  return bridge;
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const callback = (callId: string, to: CallbackReceiver = receiver, token = `tok-${callId}`) => ({ callId, subagentName: 'flue', token, url: to.urlFor(token) });

test('a parent is told protocol 2, and what Eve refuses is refused', async () => {
  const bridge = await start();
  const create = (body: Record<string, unknown>) => post(`${bridge.url}/eve/v1/session`, { message: 'hi', ...body });

  const accepted = await create({ callback: callback('c-ok', sink), protocolVersion: 2, capabilities: { requestInput: true } });
  expect(accepted.status).toBe(202);
  expect(await accepted.json()).toMatchObject({ ok: true, status: 'accepted', protocolVersion: 2 });

  const mismatch = await create({ callback: callback('c-3', sink), protocolVersion: 3 });
  expect(mismatch.status).toBe(409);
  expect(await mismatch.json()).toMatchObject({ ok: false, code: 'REMOTE_AGENT_PROTOCOL_MISMATCH', protocolVersion: 2 });

  const otherToken = await create({ callback: { ...callback('c-tok', sink), token: 'not-the-one-in-the-url' }, protocolVersion: 2 });
  expect(otherToken.status).toBe(400);
  expect(((await otherToken.json()) as { error: string }).error).toMatch(/token must match/);

  const privateHost = await create({ callback: { callId: 'c', subagentName: 'flue', token: 't', url: 'http://10.0.0.7/eve/v1/callback/t' }, protocolVersion: 2 });
  expect(privateHost.status).toBe(400);
  expect(((await privateHost.json()) as { error: string }).error).toMatch(/private or reserved/);

  const extraField = await create({ callback: { ...callback('c-x', sink), extra: 1 }, protocolVersion: 2 });
  expect(extraField.status).toBe(400);

  const badCapabilities = await create({ capabilities: { requestInput: 'yes' } });
  expect(badCapabilities.status).toBe(400);

  // No trustedForwarders in this config: a forwarded principal is refused.
  const forwarded = await create({ forwardedPrincipal: { current: { attributes: {}, authenticator: 'x', principalId: 'alice', principalType: 'user' } } });
  expect(forwarded.status).toBe(403);

  // With route auth off in development, an operationId belongs to Eve's local-dev caller: a retry finds the same session.
  const first = (await (await create({ operationId: 'op-1' })).json()) as { sessionId: string };
  const again = (await (await create({ operationId: 'op-1' })).json()) as { sessionId: string };
  expect(again.sessionId).toBe(first.sessionId);
});

test('a bodyless cancel from a server is accepted; from a cross-site browser page it is not', async () => {
  const bridge = bridges[0]!;
  const { sessionId } = (await (await post(`${bridge.url}/eve/v1/session`, { message: '/sleep 60000' })).json()) as { sessionId: string };
  await streamUntil(bridge.url, sessionId, (e) => e.type === 'message.appended');
  const cancel = (headers: Record<string, string>) => fetch(`${bridge.url}/eve/v1/session/${sessionId}/cancel`, { method: 'POST', headers });

  expect((await cancel({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' })).status).toBe(415);
  expect((await cancel({ origin: 'https://elsewhere.example' })).status).toBe(415);
  const server = await cancel({});
  expect(server.status).toBe(202);
  expect(await server.json()).toEqual({ ok: true, status: 'accepted', sessionId });
  const events = await streamUntil(bridge.url, sessionId, (e) => e.type === 'session.waiting');
  expect(events.map((e) => e.type)).toContain('turn.cancelled');
});

test('a callback owed when the parent was down is delivered once after a restart', async () => {
  await Promise.all(bridges.splice(0).map((b) => b.kill()));
  await receiver.down();
  const before = await start();
  const created = await post(`${before.url}/eve/v1/session`, { message: 'while you were away', callback: callback('call-1'), protocolVersion: 2 });
  const { sessionId } = (await created.json()) as { sessionId: string };
  await streamUntil(before.url, sessionId, (e) => e.type === 'session.waiting');
  // The bridge tried, met a refused connection, and will try again.
  await untilLogged(before, 'remote-agent callback failed; retrying', sessionId);
  await before.kill();
  expect(receiver.received).toEqual([]);

  const after = await start();
  await receiver.up();
  const delivered = await receiver.nth(1);
  expect(delivered).toEqual({
    callId: 'call-1',
    kind: 'turn.completed',
    outcome: { kind: 'parked', result: { kind: 'succeeded', output: 'Echo: while you were away' }, usageDelta: expect.any(Object) },
    output: 'Echo: while you were away',
    sessionId,
    subagentName: 'flue',
  });

  // Once acknowledged it is not owed any more, even by the next process: the follow-up's reply comes next, alone.
  await untilLogged(after, 'remote-agent callback delivered', sessionId);
  await after.kill();
  const last = await start();
  const followUp = await post(`${last.url}/eve/v1/session/${sessionId}`, { message: 'and now', callback: callback('call-2') });
  expect(followUp.status).toBe(202);
  const second = await receiver.nth(2);
  expect(second).toMatchObject({ callId: 'call-2', kind: 'turn.completed', output: 'Echo: and now' });
  await streamUntil(last.url, sessionId, (e) => e.type === 'session.waiting' && receiver.received.length >= 2);
  expect(receiver.received.map((b) => b.callId)).toEqual(['call-1', 'call-2']);
});
