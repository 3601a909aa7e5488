/**
 * Replay from the SQLite journal after a restart (the journal reopened, nothing cached): the last
 * 100 events of a 100,000-event session against the same read of a 1,000-event one (a reader's
 * catch-up should not grow with the journal), and the whole 100,000 events streamed with
 * `follow=false` against a bare node:http writer sending the same bytes, in MiB/s (the median of
 * seven reads each). Every replay
 * is checked: every index once, in order.
 * Run: node bench/replay.ts [events] [repeats]
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompatServer, SqliteJournal } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';
import { ScriptedRuntime } from '../test/support/scripted-runtime.ts';
import { fmt, percentile } from './lib.ts';

const EVENTS = Number(process.argv[2] ?? 100_000);
const REPEATS = Number(process.argv[3] ?? 50);
const SMALL = 1_000;
const FULL_REPLAYS = 7;
const delta = (i: number): EveEventDraft => ({
  type: 'message.appended',
  data: { messageDelta: `token ${i} `, sequence: 0, stepIndex: 0, turnId: 'turn_0' },
});

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** GETs `url` and reads it to the end: its bytes, the milliseconds it took, and the stream indexes it carried. */
function fetchAll(url: string): Promise<{ bytes: number; ms: number; indexes: number[] }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const ms = performance.now() - started;
        const body = Buffer.concat(chunks).toString();
        const indexes = [...body.matchAll(/"streamIndex":(\d+)/g)].map((m) => Number(m[1]));
        resolve({ bytes: body.length, ms, indexes });
      });
    })
      .on('error', reject)
      .end();
  });
}

function assertComplete(indexes: number[], from: number, to: number, label: string): void {
  const ok = indexes.length === to - from + 1 && indexes.every((index, i) => index === from + i);
  if (!ok) throw new Error(`${label}: expected indexes ${from}…${to} once each, got ${indexes.length} events`);
}

async function build(path: string): Promise<{ large: string; small: string }> {
  const journal = new SqliteJournal(path);
  const compat = await createCompatServer({ runtime: new ScriptedRuntime(), journal, mode: 'development' });
  const large = await compat.sessions.execute({ kind: 'create' });
  const small = await compat.sessions.execute({ kind: 'create' });
  for (let i = 0; i < EVENTS; i += 1_000) await journal.append(large, Array.from({ length: Math.min(1_000, EVENTS - i) }, (_, k) => delta(i + k)));
  await journal.append(small, Array.from({ length: SMALL }, (_, k) => delta(k)));
  await compat.close();
  return { large, small };
}

const dir = mkdtempSync(join(tmpdir(), 'eve-flue-replay-'));
try {
  const path = join(dir, 'journal.db');
  const { large, small } = await build(path);
  // Reopened: what a restarted bridge reads, from the store alone.
  const journal = new SqliteJournal(path);
  const compat = await createCompatServer({ runtime: new ScriptedRuntime(), journal, mode: 'development' });
  const server = createServer(compat.app);
  const url = await listen(server);
  const stream = (sessionId: string, query: string) => `${url}/eve/v1/session/${sessionId}/stream?${query}`;

  const lastHundred = async (sessionId: string, tail: number): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const { ms, indexes } = await fetchAll(stream(sessionId, 'startIndex=-100&follow=false'));
      assertComplete(indexes, tail - 99, tail, 'last 100');
      times.push(ms);
    }
    return times.sort((a, b) => a - b);
  };
  const largeTimes = await lastHundred(large, EVENTS - 1);
  const smallTimes = await lastHundred(small, SMALL - 1);

  /** The median of FULL_REPLAYS whole reads: one read of 20 MiB is too short to time alone. */
  const fullReplay = async (target: string, label: string) => {
    const runs: { bytes: number; ms: number }[] = [];
    for (let i = 0; i < FULL_REPLAYS; i++) {
      const run = await fetchAll(target);
      assertComplete(run.indexes, 0, EVENTS - 1, label);
      runs.push({ bytes: run.bytes, ms: run.ms });
    }
    return runs.sort((a, b) => a.ms - b.ms)[Math.floor(FULL_REPLAYS / 2)]!;
  };
  const full = await fullReplay(stream(large, 'startIndex=0&follow=false'), 'full replay');

  // The same bytes from a bare writer: the lines read up front, written a page at a time with back-pressure.
  const lines = (await journal.read(large, 0, EVENTS)).map((line) => line.line);
  const bare = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('\n');
    for (let i = 0; i < lines.length; i += 256) {
      if (!res.write(lines.slice(i, i + 256).join(''))) await once(res, 'drain');
    }
    res.end();
  });
  const bareUrl = await listen(bare);
  const bareRun = await fullReplay(bareUrl, 'bare replay');

  const mibPerSecond = (run: { bytes: number; ms: number }) => run.bytes / 2 ** 20 / (run.ms / 1000);
  const p = (values: number[]) => `p50 ${percentile(values, 50).toFixed(2)} ms, p99 ${percentile(values, 99).toFixed(2)} ms`;
  console.log(`SQLite journal reopened, ${REPEATS} reads each (Node ${process.version})`);
  console.log(`last 100 of ${fmt(SMALL).padStart(7)} events: ${p(smallTimes)}`);
  console.log(`last 100 of ${fmt(EVENTS).padStart(7)} events: ${p(largeTimes)}  (${(percentile(largeTimes, 50) / percentile(smallTimes, 50)).toFixed(2)}× the small journal)`);
  console.log(
    `full replay of ${fmt(EVENTS)} events (${fmt(full.bytes / 2 ** 20)} MiB, median of ${FULL_REPLAYS}): compat ${mibPerSecond(full).toFixed(0)} MiB/s, ` +
      `bare writer ${mibPerSecond(bareRun).toFixed(0)} MiB/s (${(mibPerSecond(full) / mibPerSecond(bareRun)).toFixed(2)}×)`,
  );
  server.closeAllConnections();
  server.close();
  bare.close();
  await compat.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
