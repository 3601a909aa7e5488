import { randomBytes } from 'node:crypto';
import { afterAll, expect, test } from '@jest/globals';
import { RedisConnections } from '@eve-flue/compat-server';
import { RedisAuthStore, RedisSignInEvents, Sealer } from '@eve-flue/connections';

/** Nothing listens on port 1, and no retry: every command meets an unreachable Redis. */
const unreachable = new RedisConnections('redis://127.0.0.1:1', { redis: { retryStrategy: () => null } });
const store = new RedisAuthStore(unreachable.commands, new Sealer(randomBytes(32)), 'eve-test:');
const events = new RedisSignInEvents(unreachable.commands, unreachable.channels, 'eve-test:');
const outage = { name: 'StoreUnavailableError', code: 'service_unavailable' };

afterAll(() => unreachable.close());

test('every sign-in store call during a Redis outage is a 503 service_unavailable', async () => {
  const flow = { id: 'flow_1', expiresAt: Date.now() + 60_000 } as Parameters<RedisAuthStore['putFlow']>[0];
  const tokens = { accessToken: 'secret' } as Parameters<RedisAuthStore['putToken']>[2];
  const client = { clientId: 'c' } as Parameters<RedisAuthStore['putClient']>[1];
  const calls: [string, () => Promise<unknown>][] = [
    ['getToken', () => store.getToken('sub', 'demo')],
    ['putToken', () => store.putToken('sub', 'demo', tokens)],
    ['deleteToken', () => store.deleteToken('sub', 'demo')],
    ['putFlow', () => store.putFlow(flow)],
    ['getFlow', () => store.getFlow('flow_1')],
    ['bindFlow', () => store.bindFlow('flow_1', 'hash')],
    ['takeFlow', () => store.takeFlow('flow_1')],
    ['getClient', () => store.getClient('key')],
    ['putClient', () => store.putClient('key', client)],
    ['publish', () => events.publish('flow_1', { outcome: 'authorized' })],
  ];
  for (const [name, call] of calls) await expect(call().then(() => name)).rejects.toMatchObject(outage);
});

test('startup refuses an unreachable Redis clearly, once for every store on it', async () => {
  await expect(unreachable.ready()).rejects.toMatchObject({ ...outage, message: 'Redis cannot be reached.' });
  await expect(events.ready()).rejects.toMatchObject(outage);
});
