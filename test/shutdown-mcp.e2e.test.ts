import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { deleteKeys } from './support/redis-keys.ts';
import { startCliBridge, untilLogged, type CliBridge } from './support/cli-bridge.ts';
import { connectMcp, invocation, rejection } from './support/mcp-client.ts';

/**
 * SIGTERM to an instance whose MCP channel runs an invocation: while it drains, `agent_start` is
 * refused (retryable, to be called again elsewhere) and the running invocations can still be
 * read and cancelled; the running one finishes within the grace period, and another instance
 * reads it completed.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `eve-shutdown-mcp-test:${randomUUID()}:`;
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));
/** Far longer than the turn: the drain ends when the turn does, not when the grace runs out. */
const GRACE_MS = 60_000;

let demo: DemoStack;
let instances: CliBridge[] = [];

beforeAll(async () => {
  demo = await startDemoStack();
  const env = { REDIS_URL, REDIS_PREFIX: PREFIX, MCP_URL: demo.mcpUrl, BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'), SHUTDOWN_GRACE_MS: String(GRACE_MS), MCP: '1' };
  instances = await Promise.all([0, 1].map(() => startCliBridge(env, ['--config', CONFIG])));
}, 60_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await demo?.close();
  await deleteKeys(REDIS_URL, PREFIX);
});

test('draining: agent_start is refused retryable; agent_get and agent_cancel still answer, and the running invocation completes', async () => {
  const [a, b] = instances as [CliBridge, CliBridge];
  const client = await connectMcp(`${a.url}/eve/v1/mcp`);
  const running = await invocation(client, 'agent_start', { message: '/sleep 10000' });
  const doomed = await invocation(client, 'agent_start', { message: '/sleep 120000' });

  const exited = once(a.child, 'exit');
  a.child.kill('SIGTERM');
  await untilLogged(a, 'draining: no new turns; running ones get the grace period');

  expect(await rejection(client, 'agent_start', { message: 'one more' })).toEqual({ code: 'internal', message: 'This instance is shutting down; send again.', retryable: true });
  expect(await invocation(client, 'agent_get', { invocationId: running.invocationId })).toMatchObject({ invocationId: running.invocationId, status: 'working' });
  expect((await invocation(client, 'agent_cancel', { invocationId: doomed.invocationId })).invocationId).toBe(doomed.invocationId);
  await client.close();

  // The drain ends once both turns have: the one that ran on to its end and the cancelled one.
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
  expect(a.logs.some((line) => String(line.msg).startsWith('turns still running after the grace period'))).toBe(false);
  const elsewhere = await connectMcp(`${b.url}/eve/v1/mcp`);
  expect(await invocation(elsewhere, 'agent_get', { invocationId: running.invocationId })).toMatchObject({ status: 'completed' });
  expect(await invocation(elsewhere, 'agent_get', { invocationId: doomed.invocationId })).toMatchObject({ status: 'cancelled' });
  // Another instance starts new work.
  expect((await invocation(elsewhere, 'agent_start', { message: 'hello' })).status).toBe('working');
  await elsewhere.close();
}, 90_000);
