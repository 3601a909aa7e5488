import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startCallbackReceiver, type CallbackReceiver } from './support/callback-receiver.ts';
import { startCliBridge, untilLogged, type CliBridge } from './support/cli-bridge.ts';
import { streamUntil } from './support/ndjson.ts';
import { deleteKeys } from './support/redis-keys.ts';

/**
 * Two bridge processes on one Redis: a callback the first one owed when it died is delivered, once,
 * by the other.
 */
const CONFIG = fileURLToPath(new URL('./support/remote-agent.config.ts', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-takeover-${randomBytes(6).toString('hex')}:`;
const env = { REDIS_URL, REDIS_PREFIX: PREFIX, BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64') };
let receiver: CallbackReceiver;
const bridges: CliBridge[] = [];

beforeAll(async () => {
  receiver = await startCallbackReceiver();
});

afterAll(async () => {
  await Promise.all(bridges.map((b) => b.stop()));
  await receiver.close();
  await deleteKeys(REDIS_URL, PREFIX);
});

const start = async () => {
  const bridge = await startCliBridge(env, ['start', '--config', CONFIG]);
  bridges.push(bridge);
  return bridge;
};

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const callback = (callId: string) => ({ callId, subagentName: 'flue', token: `tok-${callId}`, url: receiver.urlFor(`tok-${callId}`) });

test('a callback owed by an instance that died is delivered once by the instance still running', async () => {
  await receiver.down();
  const [first, second] = [await start(), await start()] as [CliBridge, CliBridge];
  const created = await post(`${first.url}/eve/v1/session`, { message: 'before the crash', callback: callback('call-1'), protocolVersion: 2 });
  const { sessionId } = (await created.json()) as { sessionId: string };
  await streamUntil(first.url, sessionId, (e) => e.type === 'session.waiting');
  await untilLogged(first, 'remote-agent callback failed; retrying', sessionId);
  await first.kill();

  await receiver.up();
  expect(await receiver.nth(1)).toMatchObject({ callId: 'call-1', kind: 'turn.completed', output: 'Echo: before the crash', sessionId });
  await untilLogged(second, 'remote-agent callback delivered', sessionId);

  const followUp = await post(`${second.url}/eve/v1/session/${sessionId}`, { message: 'after it', callback: callback('call-2') });
  expect(followUp.status).toBe(202);
  expect(await receiver.nth(2)).toMatchObject({ callId: 'call-2', output: 'Echo: after it' });
  expect(receiver.received.map((b) => b.callId)).toEqual(['call-1', 'call-2']);
}, 90_000);
