/**
 * How Flue's Redis adapter writes one streaming turn: appends (one MULTI/EXEC each) against the
 * model's text deltas, and the append latency. The scripted model streams `/sleep 2000` at 200
 * tokens/s (about 400 deltas). Needs Redis on REDIS_URL. Run: node bench/flue-redis-writes.ts
 */
import { randomUUID } from 'node:crypto';
import { init, useModel } from '@flue/runtime';
import { start } from '@flue/runtime/node';
import { Redis } from 'ioredis';
import { createScriptedModel } from '@eve-flue/flue-adapter';
import { redisFlueDb } from '@eve-flue/flue-redis';
import { fmt, percentile } from './lib.ts';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench-flue-writes:${randomUUID()}:`;
const model = createScriptedModel();
function Bench() {
  useModel(model.model);
  return 'Benchmark agent.';
}
Bench.agentName = 'bench';

const redis = new Redis(url);
const transactions = new Redis(url);
const db = redisFlueDb({ commands: redis, transactions }, { prefix });
const appendMs: number[] = [];
const connect = db.connect.bind(db);
db.connect = async () => {
  const stores = await connect();
  const stream = stores.conversationStreamStore;
  const append = stream.append.bind(stream);
  stream.append = async (input) => {
    const started = performance.now();
    try {
      return await append(input);
    } finally {
      appendMs.push(performance.now() - started);
    }
  };
  return stores;
};
const flue = await start({ agents: [Bench], providers: [model.provider], db });
const handle = init(Bench, { id: 'bench-1' });
const started = performance.now();
await handle.read(await handle.dispatch({ message: '/sleep 2000' }));
const turnMs = performance.now() - started;
await flue.stop();

const keys = await redis.keys(`${prefix}*`);
if (keys.length > 0) await redis.del(...keys);
redis.disconnect();
transactions.disconnect();
const deltas = Math.round((2000 / 1000) * 200);
const sorted = [...appendMs].sort((a, b) => a - b);
process.stdout.write(
  `flue-redis: one ${fmt(turnMs)} ms streaming turn (~${deltas} deltas) = ${appendMs.length} appends; append p50 ${percentile(sorted, 50).toFixed(2)} ms, max ${sorted.at(-1)!.toFixed(2)} ms\n`,
);
