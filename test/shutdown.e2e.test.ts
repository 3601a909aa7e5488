import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { startBalancer, type Balancer } from './support/balancer.ts';
import { deleteKeys } from './support/redis-keys.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { readUntil } from './support/events.ts';

/**
 * SIGTERM to the instance running a streaming turn, behind a balancer that polls readiness:
 * the client's stream ends resumably and goes on from another instance, the turn ends cleanly,
 * and no event is lost or repeated.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `eve-shutdown-test:${randomUUID()}:`;
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));
const GRACE_MS = 1_500;

let demo: DemoStack;
let balancer: Balancer;
let instances: CliBridge[] = [];

beforeAll(async () => {
  demo = await startDemoStack();
  const env = {
    REDIS_URL,
    REDIS_PREFIX: PREFIX,
    MCP_URL: demo.mcpUrl,
    BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'),
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
  };
  instances = await Promise.all([0, 1, 2].map(() => startCliBridge(env, ['--config', CONFIG])));
  balancer = await startBalancer([]);
}, 60_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await balancer?.close();
  await demo?.close();
  await deleteKeys(REDIS_URL, PREFIX);
});

/** What a balancer's health check sees. */
const readiness = async (instance: CliBridge) => (await fetch(`${instance.url}/ready`).catch(() => undefined))?.status ?? 0;

test('readiness answers 200 while an instance can take traffic', async () => {
  for (const instance of instances) expect(await readiness(instance)).toBe(200);
  const health = await (await fetch(`${instances[0]!.url}/eve/v1/health`)).json();
  expect(health).toEqual({ ok: true, status: 'ready', workflowId: 'eve-flue-bridge' });
});

test('SIGTERM mid-turn: the stream ends resumably and goes on elsewhere, the turn ends cleanly, nothing lost or repeated', async () => {
  const [a, b, c] = instances as [CliBridge, CliBridge, CliBridge];
  let next = 0;
  balancer.route = () => a.url; // the session starts on A
  const client = new Client({ host: balancer.url });
  const { session } = await client.sessions.create({ message: 'remember this' });
  const live = session.stream({ startIndex: 0 })[Symbol.asyncIterator]();
  const seen: { type: string; streamIndex: number; meta?: { id: string } }[] = [];
  const readUntilType = async (type: string) => {
    for (;;) {
      const { value, done } = await live.next();
      if (done) throw new Error(`the stream ended before ${type}`);
      seen.push(value as unknown as (typeof seen)[number]);
      if (value.type === type) return;
    }
  };
  await readUntilType('session.waiting');
  await session.send('/sleep 20000');
  await readUntilType('message.appended');

  const exited = once(a.child, 'exit');
  const signalled = Date.now();
  a.child.kill('SIGTERM');
  // The balancer takes A out as soon as its readiness fails.
  while ((await readiness(a)) === 200);
  const healthy = [b.url, c.url];
  balancer.route = () => healthy[next++ % healthy.length]!;
  expect((await fetch(`${a.url}/eve/v1/session/${session.state.sessionId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"hi"}' })).status).toBe(503);

  await readUntilType('session.waiting');
  await live.return?.();
  const [code] = (await exited) as [number | null];
  const exitMs = Date.now() - signalled;
  process.stdout.write(`[shutdown] SIGTERM to exit: ${exitMs} ms (grace ${GRACE_MS} ms)\n`);
  expect(code).toBe(0);

  const failed = seen.filter((e) => e.type === 'turn.failed');
  expect(failed).toHaveLength(1);
  expect((failed[0] as unknown as { data: { code: string; terminal: boolean } }).data).toMatchObject({ code: 'interrupted', terminal: false });
  expect(seen.map((e) => e.streamIndex)).toEqual(seen.map((_, i) => i));
  expect(new Set(seen.map((e) => e.meta!.id)).size).toBe(seen.length);
  // The reader's stream on A ended and it reconnected through the balancer to another instance.
  const streams = balancer.served.filter((s) => s.path.includes('/stream'));
  expect(streams.some((s) => s.upstream === a.url)).toBe(true);
  expect(streams.some((s) => s.upstream !== a.url)).toBe(true);
  // A's access log recorded the stream it ended, with the events it carried.
  const streamLine = a.logs.find((l) => l.msg === 'request' && (l.access as { route: string }).route === '/eve/v1/session/:sessionId/stream');
  expect(streamLine?.access).toMatchObject({ status: 200, transport: 'ndjson', events: expect.any(Number) });

  // The whole log, read again from another instance, is the same events once each.
  const all = await readUntil(new Client({ host: b.url }).sessions.attach(session.state.sessionId).stream({ startIndex: 0 }), (e) => (e as unknown as { streamIndex: number }).streamIndex === seen.length - 1);
  expect(all.map((e) => e.meta!.id)).toEqual(seen.map((e) => e.meta!.id));
  // The session goes on elsewhere, and the agent still has the conversation.
  const after = client.sessions.attach(session.state.sessionId, { streamIndex: seen.length });
  expect((await (await after.send('/recall')).result()).message).toBe('Recall: ["remember this","/sleep 20000"]');
}, 60_000);
