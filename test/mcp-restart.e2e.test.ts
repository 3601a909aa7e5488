import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { bearerTokens, silentLogger } from '@eve-flue/compat-server';
import { startBridge, type RunningBridge } from '@eve-flue/bridge';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { freePort } from './support/free-port.ts';
import { connectMcp, invocation, pollUntil, rejection } from './support/mcp-client.ts';

// Invocations are sessions in the journal: a bridge restarted on the same data folder answers
// for them, with their owners, their results, and the turn the restart cut short.
const TOKENS = { ann: 'restart-mcp-token-of-ann-01', bob: 'restart-mcp-token-of-bob-01' };
let demo: DemoStack;
let dataDir: string;
let running: RunningBridge | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-mcp-restart-'));
  demo = await startDemoStack();
});

afterAll(async () => {
  await running?.close();
  await demo?.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('after a restart: the finished invocation reads the same, the cut one failed as interrupted, owners unchanged', async () => {
  const config = { ...demo.config, dataDir, port: await freePort(), mode: 'development' as const, auth: bearerTokens({ [TOKENS.ann]: 'ann', [TOKENS.bob]: 'bob' }), mcp: {} };
  running = await startBridge(config, { logger: silentLogger });
  const before = await connectMcp(`${running.url}/eve/v1/mcp`, TOKENS.ann);
  const finished = await invocation(before, 'agent_start', { message: 'before the restart' });
  const done = await pollUntil(before, finished.invocationId, ['completed']);
  const cut = await invocation(before, 'agent_start', { message: '/sleep 30000' });
  await before.close();
  await running.close();

  running = await startBridge(config, { logger: silentLogger });
  const after = await connectMcp(`${running.url}/eve/v1/mcp`, TOKENS.ann);
  expect(await invocation(after, 'agent_get', { invocationId: finished.invocationId })).toEqual(done);
  expect(await invocation(after, 'agent_get', { invocationId: cut.invocationId })).toMatchObject({ status: 'failed', error: { code: -32603, data: { runId: cut.invocationId, eveCode: 'interrupted' } } });
  const bob = await connectMcp(`${running.url}/eve/v1/mcp`, TOKENS.bob);
  expect(await rejection(bob, 'agent_get', { invocationId: finished.invocationId })).toMatchObject({ code: 'not_found' });
  await Promise.all([after.close(), bob.close()]);
});
