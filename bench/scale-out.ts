/**
 * Scale-out: the concurrent-turns load (N sessions, each `/sleep 5000`: 200 deltas/s for 5 s,
 * one NDJSON reader each) through one bridge instance on SQLite, one on Redis, and two on one
 * Redis behind a round-robin balancer (sessions created, messages posted and streams read through
 * it, as in a deployment: commands reach each session's owner, streams are read anywhere). Prints
 * each run's aggregate deltas/s delivered, the ratios two/one on Redis and Redis/SQLite, and what
 * was lost or duplicated. Every instance runs in a process of its own; Redis on 127.0.0.1:6379
 * (or REDIS_URL), under a random prefix deleted afterwards.
 * Run: node bench/scale-out.ts [N,N,...] (default 300; or SCALE_OUT_N).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { startBalancer } from '../test/support/balancer.ts';
import { deleteKeys } from '../test/support/redis-keys.ts';
import { fmt, percentile } from './lib.ts';
import { ask, child, post, Reader, SLEEP_MS, TEXT_PER_TURN, type Stats } from './turn-load.ts';

const SIZES = (process.argv[2] ?? process.env.SCALE_OUT_N ?? '300').split(',').map(Number);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DEADLINE_MS = SLEEP_MS + 60_000;

interface Run {
  rate: number;
  finished: number;
  lost: number;
  duplicated: number;
  p50: number;
  p99: number;
  cpu: number[];
}

async function startInstances(count: number, redis?: { prefix: string; tokenKey: string }): Promise<{ urls: string[]; children: ChildProcess[] }> {
  const children = Array.from({ length: count }, () => child('./serve-bridge.ts', redis ? [REDIS_URL, redis.prefix, redis.tokenKey] : []));
  const urls = await Promise.all(children.map(async (c) => ((await once(c, 'message')) as [{ url: string }])[0].url));
  return { urls, children };
}

async function stop(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      c.send('stop');
      await once(c, 'exit');
    }),
  );
}

/** N sessions' turns through `base`, every instance's CPU measured over the turns. */
async function load(base: string, sessions: number, children: readonly ChildProcess[]): Promise<Run> {
  const readers: Reader[] = [];
  for (let i = 0; i < sessions; i++) {
    const { sessionId } = await post(`${base}/eve/v1/session`);
    readers.push(new Reader(`${base}/eve/v1/session/${sessionId}/stream`));
  }
  await Promise.all(readers.map((r) => r.open()));
  await Promise.all(children.map((c) => ask(c, 'mark')));
  const started = performance.now();
  await Promise.all(
    readers.map(async (reader) => {
      reader.postedAt = performance.now();
      await post(reader.url.replace(/\/stream$/, ''), { message: `/sleep ${SLEEP_MS}` });
    }),
  );
  await Promise.race([Promise.all(readers.map((r) => r.finished)), new Promise((resolve) => setTimeout(resolve, DEADLINE_MS).unref())]);
  const seconds = (performance.now() - started) / 1000;
  const stats = await Promise.all(children.map((c) => ask<Stats>(c, 'stats')));
  for (const reader of readers) reader.close();
  const delays = readers.flatMap((r) => r.delays).sort((a, b) => a - b);
  return {
    rate: readers.reduce((sum, r) => sum + r.deltas, 0) / seconds,
    finished: readers.filter((r) => r.finishedAt !== undefined).length,
    lost: readers.reduce((sum, r) => sum + r.lost + (r.finishedAt !== undefined && r.text !== TEXT_PER_TURN ? 1 : 0), 0),
    duplicated: readers.reduce((sum, r) => sum + r.duplicated, 0),
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    cpu: stats.map((s) => (s.cpuMicros / 1e6 / seconds) * 100),
  };
}

function print(name: string, sessions: number, run: Run): void {
  console.log(
    `  ${name.padEnd(22)} ${fmt(run.rate).padStart(7)} deltas/s; turns ${run.finished}/${sessions} done; delivery p50 ${run.p50} ms p99 ${run.p99} ms; ` +
      `CPU ${run.cpu.map((c) => `${c.toFixed(0)}%`).join(' + ')} of a core; lost ${run.lost}, duplicated ${run.duplicated}`,
  );
}

async function singleSqlite(sessions: number): Promise<Run> {
  const { urls, children } = await startInstances(1);
  try {
    return await load(urls[0]!, sessions, children);
  } finally {
    await stop(children);
  }
}

async function onRedis(sessions: number, count: number): Promise<Run> {
  const redis = { prefix: `eve-bench-scale:${randomUUID()}:`, tokenKey: randomBytes(32).toString('base64') };
  const { urls, children } = await startInstances(count, redis);
  const balancer = count > 1 ? await startBalancer(urls) : undefined;
  try {
    return await load(balancer?.url ?? urls[0]!, sessions, children);
  } finally {
    await balancer?.close();
    await stop(children);
    await deleteKeys(REDIS_URL, redis.prefix);
  }
}

console.log(`scale-out: N sessions at model speed (200 deltas/s each asked), one NDJSON reader each (Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
for (const sessions of SIZES) {
  console.log(`N=${sessions}: asked ${fmt(sessions * 200)} deltas/s for ${SLEEP_MS / 1000} s`);
  const sqlite = await singleSqlite(sessions);
  print('one instance, SQLite', sessions, sqlite);
  const one = await onRedis(sessions, 1);
  print('one instance, Redis', sessions, one);
  const two = await onRedis(sessions, 2);
  print('two instances, Redis', sessions, two);
  console.log(`  ratio  two/one on Redis ${(two.rate / one.rate).toFixed(2)}×; one on Redis / one on SQLite ${(one.rate / sqlite.rate).toFixed(2)}×`);
}
