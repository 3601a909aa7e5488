/**
 * Append on instance A → a follower on instance B: latency through Redis (two journals, each
 * with its own connections, as two bridge instances have), against the in-process figure (one
 * memory journal). Run: node bench/cross-instance-latency.ts [events]
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { JournalFollower, MemoryJournal, RedisConnections, RedisJournal, type Journal } from '@eve-flue/compat-server';
import { fmt, percentile } from './lib.ts';

const EVENTS = Number(process.argv[2] ?? 2_000);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function measure(writer: Journal, reader: Journal): Promise<number[]> {
  const sessionId = `ses_${randomUUID()}`;
  await writer.createSession({ id: sessionId, createdAt: Date.now(), status: 'open', turnCount: 0 });
  const sentAt: number[] = [];
  const latencies: number[] = [];
  let warmedUp!: () => void;
  const warm = new Promise<void>((resolve) => (warmedUp = resolve));
  const following = new Promise<void>((resolve, reject) => {
    const follower = new JournalFollower(reader, sessionId, { from: 0 }, {
      write(page) {
        for (const line of page) {
          if (line.index === 0) warmedUp();
          else latencies.push(performance.now() - sentAt[line.index]!);
          if (line.index === EVENTS) {
            follower.close();
            resolve();
          }
        }
        return true;
      },
      end: reject,
    });
  });
  // A first event, not measured: the follower is live (subscribed) once it has seen it.
  await writer.append(sessionId, [{ type: 'message.appended', data: { messageDelta: 'warm-up', sequence: 0, stepIndex: 0, turnId: 'turn_0' } }]);
  await warm;
  for (let i = 1; i <= EVENTS; i++) {
    sentAt[i] = performance.now();
    await writer.append(sessionId, [{ type: 'message.appended', data: { messageDelta: `t${i}`, sequence: 0, stepIndex: 0, turnId: 'turn_0' } }]);
    // One event at a time, as a model streams: the reader catches up between appends.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await following;
  return latencies.sort((a, b) => a - b);
}

const prefix = `eve-bench:${randomUUID()}:`;
// Two instances: each with its own connections, as two bridges would have.
const [onA, onB] = [new RedisConnections(REDIS_URL), new RedisConnections(REDIS_URL)];
const a = new RedisJournal(onA, { prefix });
const b = new RedisJournal(onB, { prefix });
await Promise.all([a.ready(), b.ready()]);
const memory = new MemoryJournal();
try {
  const local = await measure(memory, memory);
  const remote = await measure(a, b);
  const row = (label: string, values: number[]) =>
    console.log(`${label.padEnd(40)} p50 ${percentile(values, 50).toFixed(3)} ms   p99 ${percentile(values, 99).toFixed(3)} ms`);
  console.log(`${fmt(EVENTS)} appends, one follower (Node ${process.version})`);
  row('in process (memory journal)', local);
  row('instance A → instance B (Redis)', remote);
} finally {
  await a.close();
  await b.close();
  await Promise.all([onA.close(), onB.close()]);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}
