import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { deleteKeys } from './support/redis-keys.ts';

/**
 * Idle sessions leave memory (IDLE_SESSION_MS=0: as soon as their turn ended and their stream
 * closed), and the real `eve/client` cannot tell: the next message reloads the session from the
 * stores, the agent remembers the conversation, connection tools work again, and the turn's
 * events have the same shape as before the eviction. On one instance (the demo CLI, SQLite), and
 * on a Redis cluster, where the session is then taken over by another instance.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));
const ECHO = '/tool connection__demo__echo {"text":"again"}';

function metricsOf(bridge: CliBridge): () => Promise<Map<string, number>> {
  const url = String(bridge.logs.find((line) => typeof line.metrics === 'string')?.metrics);
  return async () => {
    const text = await (await fetch(url)).text();
    const values = new Map<string, number>();
    for (const line of text.split('\n')) {
      const match = /^(eve_bridge_(?:session_evictions_total|resident_sessions)(?:\{[^}]*\})?) (\S+)$/.exec(line);
      if (match) values.set(match[1]!, Number(match[2]));
    }
    return values;
  };
}

/** Waits (scraping the metrics) until the instance's metrics satisfy `done`. */
async function metricsUntil(bridge: CliBridge, done: (values: Map<string, number>) => boolean): Promise<Map<string, number>> {
  const scrape = metricsOf(bridge);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const values = await scrape();
    if (done(values)) return values;
    if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify([...values])}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const evictions = (values: Map<string, number>, reason: 'idle' | 'capacity') => values.get(`eve_bridge_session_evictions_total{reason="${reason}"}`) ?? 0;

/** Waits until the instance holds no session in memory; how many it has evicted for being idle by then. */
async function noneResident(bridge: CliBridge): Promise<number> {
  return evictions(await metricsUntil(bridge, (values) => values.get('eve_bridge_resident_sessions') === 0), 'idle');
}

/** The event types of a turn's result, without the ids and times that differ from turn to turn. */
const shape = (events: readonly { type: string }[]) => events.map((e) => e.type);

function recalled(message: string | undefined): string[] {
  const listed = /^Recall: (.*)$/s.exec(message ?? '');
  expect(listed).not.toBeNull();
  return JSON.parse(listed![1]!) as string[];
}

let demo: DemoStack;
beforeAll(async () => {
  demo = await startDemoStack();
});
afterAll(async () => {
  await demo?.close();
});

describe('an evicted session', () => {
  test('on one instance: reloaded by its next message, the agent remembering and its tools working', async () => {
    const bridge = await startCliBridge({ IDLE_SESSION_MS: '0', METRICS_PORT: '0' });
    try {
      const client = new Client({ host: bridge.url });
      const { session, response } = await client.sessions.create({ message: 'first: apples' });
      let index = (await response!.result()).events.length;
      const onSession = () => client.sessions.attach(session.state.sessionId, { streamIndex: index });
      const before = await (await onSession().send(ECHO)).result();
      index += before.events.length;
      expect(before.message).toBe('Tool connection__demo__echo returned: again');

      const evicted = await noneResident(bridge);
      expect(evicted).toBeGreaterThanOrEqual(1);

      const after = await (await onSession().send(ECHO)).result();
      index += after.events.length;
      expect(after.message).toBe('Tool connection__demo__echo returned: again');
      expect(shape(after.events)).toEqual(shape(before.events));
      expect(await noneResident(bridge)).toBeGreaterThan(evicted);
      const recall = await (await onSession().send('/recall')).result();
      expect(recalled(recall.message)).toEqual(['first: apples', ECHO, ECHO]);
      // The whole stream reads back across the evictions: every event once, none missing.
      const ids: string[] = [];
      for await (const event of client.sessions.attach(session.state.sessionId).stream({ startIndex: 0, follow: false })) ids.push(event.meta!.id);
      expect(ids).toHaveLength(index + recall.events.length);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await bridge.stop();
    }
  }, 60_000);

  test('past maxResidentSessions: the least recently used idle session leaves, and comes back whole', async () => {
    const bridge = await startCliBridge({ MAX_RESIDENT_SESSIONS: '1', METRICS_PORT: '0' });
    try {
      const client = new Client({ host: bridge.url });
      const first = await client.sessions.create({ message: 'first: plums' });
      const index = (await first.response!.result()).events.length;
      const second = await client.sessions.create({ message: 'second: figs' });
      await second.response!.result();
      const metrics = await metricsUntil(bridge, (values) => evictions(values, 'capacity') >= 1);
      expect(evictions(metrics, 'idle')).toBe(0);
      expect(metrics.get('eve_bridge_resident_sessions')).toBe(1);
      const recall = await (await client.sessions.attach(first.session.state.sessionId, { streamIndex: index }).send('/recall')).result();
      expect(recalled(recall.message)).toEqual(['first: plums']);
      await metricsUntil(bridge, (values) => evictions(values, 'capacity') >= 2); // now the second one made way
    } finally {
      await bridge.stop();
    }
  }, 60_000);

  test('on a Redis cluster: reloaded where it was evicted, then taken over by another instance', async () => {
    const prefix = `eve-eviction-test:${randomUUID()}:`;
    const env = { REDIS_URL, REDIS_PREFIX: prefix, MCP_URL: demo.mcpUrl, BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'), IDLE_SESSION_MS: '0', METRICS_PORT: '0' };
    const [a, b] = await Promise.all([startCliBridge(env, ['--config', CONFIG]), startCliBridge(env, ['--config', CONFIG])]);
    try {
      const [onA, onB] = [a!, b!].map((i) => new Client({ host: i.url }));
      const { session, response } = await onA!.sessions.create({ message: 'first: pears' });
      let index = (await response!.result()).events.length;
      const send = async (client: Client, message: string) => {
        const result = await (await client.sessions.attach(session.state.sessionId, { streamIndex: index }).send(message)).result();
        index += result.events.length;
        return result;
      };
      const evictedOnA = await noneResident(a!);
      expect(evictedOnA).toBeGreaterThanOrEqual(1);
      expect((await send(onA!, ECHO)).message).toBe('Tool connection__demo__echo returned: again');
      expect(await noneResident(a!)).toBeGreaterThan(evictedOnA);
      await a!.kill();
      const taken = await send(onB!, '/recall');
      expect(recalled(taken.message)).toEqual(['first: pears', ECHO]);
      expect((await send(onB!, ECHO)).message).toBe('Tool connection__demo__echo returned: again');
      expect(await noneResident(b!)).toBeGreaterThanOrEqual(1);
      expect(recalled((await send(onB!, '/recall')).message)).toEqual(['first: pears', ECHO, '/recall', ECHO]);
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
      await deleteKeys(REDIS_URL, prefix);
    }
  }, 90_000);
});
