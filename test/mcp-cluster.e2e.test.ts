import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { connectMcp, invocation, pollUntil } from './support/mcp-client.ts';
import { deleteKeys } from './support/redis-keys.ts';

// Two bridge processes on one Redis, each serving the MCP channel: an invocation started on one
// is read, answered and cancelled on the other, and outlives the instance that started it.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `eve-mcp-cluster-test:${randomUUID()}:`;
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));
const TOKEN = `mcp-cluster-${randomUUID()}`;
let demo: DemoStack;
let instances: CliBridge[] = [];

beforeAll(async () => {
  demo = await startDemoStack();
  const env = { REDIS_URL, REDIS_PREFIX: PREFIX, MCP_URL: demo.mcpUrl, BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'), ROUTE_TOKEN: TOKEN, MCP: '1' };
  instances = await Promise.all([0, 1].map(() => startCliBridge(env, ['start', '--config', CONFIG])));
}, 60_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await demo?.close();
  await deleteKeys(REDIS_URL, PREFIX);
});

const mcpOf = (index: number) => connectMcp(`${instances[index]!.url}/eve/v1/mcp`, TOKEN);

test('started on one instance, polled to completion on the other', async () => {
  const [a, b] = await Promise.all([mcpOf(0), mcpOf(1)]);
  const { invocationId } = await invocation(a, 'agent_start', { message: 'across instances' });
  const done = await pollUntil(b, invocationId, ['completed', 'failed', 'cancelled']);
  expect(done).toMatchObject({ invocationId, status: 'completed', result: 'Echo: across instances' });
  await Promise.all([a.close(), b.close()]);
});

test('cancelled from the other instance: the command reaches the owner', async () => {
  const [a, b] = await Promise.all([mcpOf(0), mcpOf(1)]);
  const { invocationId } = await invocation(a, 'agent_start', { message: '/sleep 30000' });
  await invocation(b, 'agent_cancel', { invocationId });
  expect(await pollUntil(a, invocationId, ['completed', 'failed', 'cancelled'])).toMatchObject({ status: 'cancelled' });
  await Promise.all([a.close(), b.close()]);
});

test('the instance that started it stops (drains): the other still answers for the invocation', async () => {
  const a = await mcpOf(0);
  const { invocationId } = await invocation(a, 'agent_start', { message: '/sleep 1000' });
  await a.close();
  await instances[0]!.stop();
  const b = await mcpOf(1);
  expect(await pollUntil(b, invocationId, ['completed', 'failed', 'cancelled'])).toMatchObject({ invocationId, status: 'completed' });
  await b.close();
});
