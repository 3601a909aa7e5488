import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { startBalancer, type Balancer } from './support/balancer.ts';
import { launchChromium } from './support/browser.ts';
import { deleteKeys } from './support/redis-keys.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { collect, readUntil, typesOf } from './support/events.ts';
import { answerSignIn } from './support/sign-in.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `eve-cluster-test:${randomUUID()}:`;
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));

let demo: DemoStack;
let browser: Browser;
let balancer: Balancer;
let instances: CliBridge[] = [];

beforeAll(async () => {
  [demo, browser] = await Promise.all([startDemoStack(), launchChromium()]);
  // Behind a load balancer every instance has the balancer's public URL (and OAuth redirect URI).
  balancer = await startBalancer([]);
  const env = {
    REDIS_URL,
    REDIS_PREFIX: PREFIX,
    MCP_URL: demo.mcpUrl,
    PUBLIC_URL: balancer.url,
    BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'),
    // A stream response lasts 400 ms: a turn's reader reconnects several times, through the balancer.
    STREAM_LEASE_MS: '400',
  };
  instances = await Promise.all([0, 1, 2].map(() => startCliBridge(env, ['start', '--config', CONFIG])));
  const upstreams = instances.map((i) => i.url);
  let next = 0;
  balancer.route = () => upstreams[next++ % upstreams.length]!;
}, 60_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await balancer?.close();
  await browser?.close();
  await demo?.close();
  await deleteKeys(REDIS_URL, PREFIX);
});

const [A, B, C] = [0, 1, 2];
const clientOf = (index: number) => new Client({ host: instances[index]!.url });

test('create on one instance, send on another, stream from a third: one ordered log', async () => {
  const { session, response } = await clientOf(A).sessions.create({ message: 'hello from A' });
  const first = await response!.result();
  expect(first.message).toBe('Echo: hello from A');
  const onB = clientOf(B).sessions.attach(session.state.sessionId, { streamIndex: first.events.length });
  const second = await (await onB.send('hello via B')).result();
  expect(second.message).toBe('Echo: hello via B');
  const all = await collect(clientOf(C).sessions.attach(session.state.sessionId).stream({ startIndex: 0, follow: false }));
  expect(all.map((e) => (e as unknown as { streamIndex: number }).streamIndex)).toEqual(all.map((_, i) => i));
  expect(new Set(all.map((e) => e.meta!.id)).size).toBe(all.length);
  expect(typesOf(all).filter((t) => t === 'turn.completed')).toHaveLength(2);
});

test('a client behind the balancer reconnects across instances without losing or repeating an event', async () => {
  const client = new Client({ host: balancer.url });
  const servedBefore = balancer.served.length;
  const { response } = await client.sessions.create({ message: '/sleep 1500' });
  const result = await response!.result();
  const streams = balancer.served.slice(servedBefore).filter((s) => new URL(s.path, balancer.url).pathname.endsWith('/stream'));
  expect(streams.length).toBeGreaterThan(1);
  expect(new Set(streams.map((s) => s.upstream)).size).toBeGreaterThan(1);
  expect(result.message).toMatch(/\.$/);
  const indexes = result.events.map((e) => (e as unknown as { streamIndex: number }).streamIndex);
  expect(indexes).toEqual(indexes.map((_, i) => i));
  expect(new Set(result.events.map((e) => e.meta!.id)).size).toBe(result.events.length);
});

test('a sign-in whose callback lands on another instance resumes the turn parked on the first', async () => {
  const { session, response } = await clientOf(A).sessions.create({ message: '/tool connection__demo__whoami {}' });
  const result = response!.result();
  const parked = await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'authorization.required');
  const url = (parked.at(-1)!.data as { authorization: { url: string } }).authorization.url;
  expect(url.startsWith(balancer.url)).toBe(true);
  // Every sign-in request goes to C; the turn runs on A.
  const upstreams = instances.map((i) => i.url);
  let next = 0;
  balancer.route = (path) => (path.startsWith('/eve/v1/oauth/') ? upstreams[C]! : upstreams[next++ % 3]!);
  try {
    await answerSignIn(browser, url, 'Approve');
  } finally {
    balancer.route = () => upstreams[next++ % 3]!;
  }
  expect(balancer.served.filter((s) => s.path.startsWith('/eve/v1/oauth/callback')).map((s) => s.upstream)).toEqual([upstreams[C]]);
  const finished = await result;
  expect(finished.message).toBe('Tool connection__demo__whoami returned: demo-user');
  expect(typesOf(finished.events)).toEqual(expect.arrayContaining(['authorization.granted', 'authorization.completed']));
});

test('an instance killed mid-turn: the turn ends as interrupted within seconds, and the session goes on elsewhere', async () => {
  const { session, response } = await clientOf(A).sessions.create({ message: '/sleep 60000' });
  response!.result().catch(() => undefined);
  await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'message.appended');
  await instances[A]!.kill();
  const started = Date.now();
  const onB = clientOf(B).sessions.attach(session.state.sessionId);
  const tail = await readUntil(onB.stream({ startIndex: 0 }), (e) => e.type === 'session.waiting');
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(tail.at(-2)?.data).toMatchObject({ code: 'interrupted', terminal: false });
  const resumed = clientOf(C).sessions.attach(session.state.sessionId, { streamIndex: tail.length });
  expect((await (await resumed.send('still there?')).result()).message).toBe('Echo: still there?');
});
