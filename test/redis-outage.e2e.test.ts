import { randomBytes, randomUUID } from 'node:crypto';
import { get } from 'node:http';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { Client } from 'eve/client';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { collect } from './support/events.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const PREFIX = `eve-outage-test:${randomUUID()}:`;
let proxy: TcpProxy;
let bridge: DemoBridge;

beforeAll(async () => {
  proxy = await startTcpProxy({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });
  bridge = await startDemoBridge({ store: { redis: `redis://127.0.0.1:${proxy.port}`, prefix: PREFIX }, tokenKey: randomBytes(32).toString('base64'), metricsPort: 0 });
});

afterAll(async () => {
  await bridge?.close();
  await proxy?.close();
  const redis = new Redis(REDIS.href);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test('an instance opens its Redis connections once: commands, subscriptions, and Flue\'s transactions', async () => {
  const client = new Client({ host: bridge.url });
  const { response } = await client.sessions.create({ message: 'every store at work' });
  await response!.result();
  // Only the bridge connects through the proxy: whatever its stores did, these three carried it.
  expect(proxy.clients()).toBe(3);
});

test('without Redis, requests fail fast with 503 service_unavailable, open streams end, and nothing is half-written', async () => {
  const client = new Client({ host: bridge.url });
  const { session, response } = await client.sessions.create({ message: 'before the outage' });
  const before = await response!.result();
  const sessionId = session.state.sessionId;

  const stream = await fetch(`${bridge.url}/eve/v1/session/${sessionId}/stream?startIndex=${before.events.length}`);
  const streamEnded = stream.text();
  await proxy.cut();

  const started = Date.now();
  const refused = await fetch(`${bridge.url}/eve/v1/session/${sessionId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'during the outage' }),
  });
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(refused.status).toBe(503);
  expect(await refused.json()).toEqual({ ok: false, code: 'service_unavailable', error: expect.any(String) });
  expect((await fetch(`${bridge.url}/eve/v1/session`, { method: 'POST' })).status).toBe(503);
  // The sign-in store is on the same connection: asking for a token is a 503 too, not a 500.
  const connections = await fetch(`${bridge.url}/eve/v1/connections?sessionId=${sessionId}`);
  expect(connections.status).toBe(503);
  expect(await connections.json()).toEqual({ ok: false, code: 'service_unavailable', error: expect.any(String) });
  await streamEnded;
  // A balancer polling readiness takes the instance out; the metrics count the failed commands.
  expect((await fetch(`${bridge.url}/ready`)).status).toBe(503);
  const metrics = await (await fetch(bridge.metricsUrl!)).text();
  const failures = metrics.split('\n').filter((l) => l.startsWith('eve_bridge_redis_command_failures_total{'));
  expect(failures.reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)).toBeGreaterThan(0);

  await proxy.restore();
  // A balancer sends traffic again once the instance is ready: every one of its Redis connections
  // is back (ioredis reconnects each on its own schedule). Then the same session takes messages
  // again, and its log is whole.
  while ((await fetch(`${bridge.url}/ready`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  const after = await (await client.sessions.attach(sessionId, { streamIndex: before.events.length }).send('after the outage')).result();
  expect(after.message).toBe('Echo: after the outage');
  // A balancer probes an instance by its address: readiness answers whatever the Host, Eve's routes do not.
  expect(await statusWithHost(`${bridge.url}/ready`, '10.1.2.3')).toBe(200);
  expect(await statusWithHost(`${bridge.url}/eve/v1/health`, '10.1.2.3')).toBe(421);
  const all = await collect(client.sessions.attach(sessionId).stream({ startIndex: 0, follow: false }));
  expect(all.map((e) => (e as unknown as { streamIndex: number }).streamIndex)).toEqual(all.map((_, i) => i));
  expect(all.map((e) => e.type).filter((t) => t === 'message.received')).toHaveLength(2);
});

function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}
