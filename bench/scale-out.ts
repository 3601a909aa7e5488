/**
 * Scale-out: the concurrent-turns load (N sessions, each `/sleep 5000`: 200 deltas/s for 5 s,
 * one NDJSON reader each) through one bridge instance on SQLite, one on Redis, and two on one
 * Redis behind a round-robin balancer (sessions created, messages posted and streams read through
 * it, as in a deployment: commands reach each session's owner, streams are read anywhere). Prints
 * each run's aggregate deltas/s delivered, the ratios two/one on Redis and Redis/SQLite, what
 * was lost or duplicated, and where the machine's CPU went: each instance, the load generator,
 * the balancer (a process of its own) and Redis. Every instance runs in a process of its own; Redis on 127.0.0.1:6379
 * (or REDIS_URL), under a random prefix deleted afterwards.
 * Run: node bench/scale-out.ts [N,N,...] (default 300; or SCALE_OUT_N); SCALE_OUT_CPU_PROF=<dir>
 * writes each instance's CPU profile there.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { deleteKeys } from '../test/support/redis-keys.ts';
import { fmt, percentile } from './lib.ts';
import { ask, child, post, Reader, SLEEP_MS, TEXT_PER_TURN, type Stats } from './turn-load.ts';

const SIZES = (process.argv[2] ?? process.env.SCALE_OUT_N ?? '300').split(',').map(Number);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DEADLINE_MS = SLEEP_MS + 60_000;
/** A folder for each instance's CPU profile (`<run>-<i>.cpuprofile`; summarise with bench/profile-summary.ts). */
const PROFILE_DIR = process.env.SCALE_OUT_CPU_PROF;

interface Run {
  rate: number;
  finished: number;
  lost: number;
  duplicated: number;
  p50: number;
  p99: number;
  /** Per cent of a core, over the turns: each bridge instance. */
  cpu: number[];
  /** The rest of the machine's work, per cent of a core: the load generator (this process), the balancer, Redis. */
  generator: number;
  balancer?: number;
  redis?: number;
}

/** Redis's own CPU so far (user + system, µs), from INFO. */
async function redisCpuMicros(url: string): Promise<number> {
  const redis = new Redis(url);
  try {
    const info = await redis.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
    return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
  } finally {
    redis.disconnect();
  }
}

async function startInstances(count: number, redis?: { prefix: string; tokenKey: string }): Promise<{ urls: string[]; children: ChildProcess[] }> {
  const run = `${redis ? 'redis' : 'sqlite'}-${count}`;
  const profile = (i: number) => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${run}-${i}.cpuprofile`] : []);
  const children = Array.from({ length: count }, (_, i) => child('./serve-bridge.ts', redis ? [REDIS_URL, redis.prefix, redis.tokenKey] : [], profile(i)));
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

/** N sessions' turns through `base`; the CPU of every process taking part measured over the turns. */
async function load(base: string, sessions: number, children: readonly ChildProcess[], balancer?: ChildProcess, redisUrl?: string): Promise<Run> {
  const readers: Reader[] = [];
  for (let i = 0; i < sessions; i++) {
    const { sessionId } = await post(`${base}/eve/v1/session`);
    readers.push(new Reader(`${base}/eve/v1/session/${sessionId}/stream`));
  }
  await Promise.all(readers.map((r) => r.open()));
  const measured = balancer ? [...children, balancer] : children;
  await Promise.all(measured.map((c) => ask(c, 'mark')));
  const redisFrom = redisUrl === undefined ? 0 : await redisCpuMicros(redisUrl);
  const generatorFrom = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    readers.map(async (reader) => {
      reader.postedAt = performance.now();
      await post(reader.url.replace(/\/stream$/, ''), { message: `/sleep ${SLEEP_MS}` });
    }),
  );
  await Promise.race([Promise.all(readers.map((r) => r.finished)), new Promise((resolve) => setTimeout(resolve, DEADLINE_MS).unref())]);
  const seconds = (performance.now() - started) / 1000;
  const generatorCpu = process.cpuUsage(generatorFrom);
  const stats = await Promise.all(measured.map((c) => ask<Stats>(c, 'stats')));
  const redisCpu = redisUrl === undefined ? undefined : (await redisCpuMicros(redisUrl)) - redisFrom;
  const share = (micros: number) => (micros / 1e6 / seconds) * 100;
  for (const reader of readers) reader.close();
  const delays = readers.flatMap((r) => r.delays).sort((a, b) => a - b);
  return {
    rate: readers.reduce((sum, r) => sum + r.deltas, 0) / seconds,
    finished: readers.filter((r) => r.finishedAt !== undefined).length,
    lost: readers.reduce((sum, r) => sum + r.lost + (r.finishedAt !== undefined && r.text !== TEXT_PER_TURN ? 1 : 0), 0),
    duplicated: readers.reduce((sum, r) => sum + r.duplicated, 0),
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    cpu: stats.slice(0, children.length).map((s) => share(s.cpuMicros)),
    generator: share(generatorCpu.user + generatorCpu.system),
    ...(balancer ? { balancer: share(stats[children.length]!.cpuMicros) } : {}),
    ...(redisCpu === undefined ? {} : { redis: share(redisCpu) }),
  };
}

function print(name: string, sessions: number, run: Run): void {
  console.log(
    `  ${name.padEnd(22)} ${fmt(run.rate).padStart(7)} deltas/s; turns ${run.finished}/${sessions} done; delivery p50 ${run.p50} ms p99 ${run.p99} ms; ` +
      `lost ${run.lost}, duplicated ${run.duplicated}`,
  );
  const others = [`load generator ${run.generator.toFixed(0)}%`, ...(run.balancer === undefined ? [] : [`balancer ${run.balancer.toFixed(0)}%`]), ...(run.redis === undefined ? [] : [`Redis ${run.redis.toFixed(0)}%`])];
  const total = [...run.cpu, run.generator, run.balancer ?? 0, run.redis ?? 0].reduce((sum, c) => sum + c, 0);
  console.log(
    `  ${''.padEnd(22)} CPU, per cent of a core: bridge ${run.cpu.map((c) => `${c.toFixed(0)}%`).join(' + ')}, ${others.join(', ')}; ` +
      `all ${total.toFixed(0)}% of ${availableParallelism() * 100}%; bridge µs of CPU per delta ${((run.cpu.reduce((a, b) => a + b, 0) / 100) * 1e6 / run.rate).toFixed(0)}`,
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
  const balancer = count > 1 ? child('./serve-balancer.ts', urls) : undefined;
  const balancerUrl = balancer && ((await once(balancer, 'message')) as [{ url: string }])[0].url;
  try {
    return await load(balancerUrl ?? urls[0]!, sessions, children, balancer, REDIS_URL);
  } finally {
    await stop(balancer ? [balancer, ...children] : children);
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
