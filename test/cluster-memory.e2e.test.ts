import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { deleteKeys } from './support/redis-keys.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { readUntil } from './support/events.ts';

/**
 * What the agent remembers after the instance running its session is killed mid-turn: three CLI
 * bridges on one Redis, a conversation on A, A killed with SIGKILL, the session continued from C
 * with `/recall` (the scripted model lists the user messages in its context). Run once with
 * Flue's conversations in Redis (the default with a Redis store) and once in each instance's
 * own SQLite file, so that the difference is measured.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));
const EARLIER = ['first: apples', 'second: pears', 'third: plums'];
const INTERRUPTED = '/sleep 60000';

let demo: DemoStack;
beforeAll(async () => {
  demo = await startDemoStack();
});
afterAll(async () => {
  await demo?.close();
});

async function startCluster(flueStore: 'redis' | 'local') {
  const prefix = `eve-memory-test:${randomUUID()}:`;
  const env = {
    REDIS_URL,
    REDIS_PREFIX: prefix,
    MCP_URL: demo.mcpUrl,
    BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'),
    FLUE_STORE: flueStore,
  };
  const instances = await Promise.all([0, 1, 2].map(() => startCliBridge(env, ['--config', CONFIG])));
  return {
    instances,
    async stop() {
      await Promise.all(instances.map((i: CliBridge) => i.stop()));
      await deleteKeys(REDIS_URL, prefix);
    },
  };
}

/** Has the conversation on A, kills A mid-turn, and asks C what the agent remembers. */
async function recallAfterCrash(instances: CliBridge[]): Promise<{ remembered: string[]; recallMs: number }> {
  const [a, b, c] = instances.map((i) => new Client({ host: i.url }));
  const { session, response } = await a!.sessions.create({ message: EARLIER[0]! });
  let index = (await response!.result()).events.length;
  for (const message of EARLIER.slice(1)) {
    const result = await (await a!.sessions.attach(session.state.sessionId, { streamIndex: index }).send(message)).result();
    index += result.events.length;
  }
  const onA = a!.sessions.attach(session.state.sessionId, { streamIndex: index });
  (await onA.send(INTERRUPTED)).result().catch(() => undefined);
  await readUntil(onA.stream({ startIndex: index }), (e) => e.type === 'message.appended');
  await instances[0]!.kill();
  const tail = await readUntil(b!.sessions.attach(session.state.sessionId).stream({ startIndex: index }), (e) => e.type === 'session.waiting');
  expect(tail.at(-2)?.data).toMatchObject({ code: 'interrupted' });
  const onC = c!.sessions.attach(session.state.sessionId, { streamIndex: index + tail.length });
  const started = Date.now();
  const recall = await (await onC.send('/recall')).result();
  const recallMs = Date.now() - started;
  const listed = /^Recall: (.*)$/s.exec(recall.message ?? '');
  expect(listed).not.toBeNull();
  return { remembered: JSON.parse(listed![1]!) as string[], recallMs };
}

function report(store: string, remembered: string[], recallMs: number): void {
  process.stdout.write(`[memory] Flue store ${store}: the agent on C recalls ${remembered.length} of ${EARLIER.length + 1} earlier messages; /recall answered in ${recallMs} ms\n`);
}

describe('a session continued on another instance after a crash', () => {
  test('with Flue conversations in Redis, the agent remembers every earlier message', async () => {
    const cluster = await startCluster('redis');
    try {
      const { remembered, recallMs } = await recallAfterCrash(cluster.instances);
      report('in Redis', remembered, recallMs);
      expect(remembered).toEqual([...EARLIER, INTERRUPTED]);
    } finally {
      await cluster.stop();
    }
  }, 90_000);

  test('with Flue conversations in each instance’s own SQLite, the agent on C has forgotten them', async () => {
    const cluster = await startCluster('local');
    try {
      const { remembered, recallMs } = await recallAfterCrash(cluster.instances);
      report('local to each instance', remembered, recallMs);
      expect(remembered).toEqual([]);
    } finally {
      await cluster.stop();
    }
  }, 90_000);
});
