/**
 * N sessions streaming at model speed through the full stack (bridge process: demo agent on the
 * scripted model, SQLite journal and flue.db), one NDJSON reader each, against Flue alone running
 * the same turns with `init`/`dispatch`/`read` in a process of its own, in the same run.
 * Each turn is `/sleep 5000`: the scripted model streams 200 deltas/s for 5 s.
 * Run: node bench/concurrent-turns.ts [N,N,...] (default 50,200,500; or CONCURRENT_TURNS_N).
 * CONCURRENT_TURNS_DEADLINE_S bounds each run (default 60 s past the model's own 5 s).
 * CONCURRENT_TURNS_FLUE_FULL=1 adds Flue alone on its own sqlite() store (synchronous=FULL).
 * CONCURRENT_TURNS_CPU_PROF=<dir> writes a CPU profile of the bridge process there
 * (summarise it with node bench/profile-summary.ts <file>).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { fmt, percentile } from './lib.ts';

const SLEEP_MS = 5_000;
const DELTAS_PER_TURN = 1_000; // 200 deltas/s for 5 s, four characters each
const TEXT_PER_TURN = 'z'.repeat(DELTAS_PER_TURN * 4 - 1) + '.';
const SIZES = (process.argv[2] ?? process.env.CONCURRENT_TURNS_N ?? '50,200,500').split(',').map(Number);
const DEADLINE_MS = SLEEP_MS + Number(process.env.CONCURRENT_TURNS_DEADLINE_S ?? 60) * 1000;
const PROFILE_DIR = process.env.CONCURRENT_TURNS_CPU_PROF;
/** Also runs Flue alone on its own `sqlite()` (synchronous=FULL), to show what the bridge's setting saves. */
const FLUE_FULL = process.env.CONCURRENT_TURNS_FLUE_FULL === '1';

interface Stats {
  cpuMicros: number;
  rss: number;
}

function child(script: string, args: string[] = [], execArgv: string[] = []): ChildProcess {
  return fork(fileURLToPath(new URL(script, import.meta.url)), args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

async function ask<T>(process: ChildProcess, message: string): Promise<T> {
  process.send(message);
  const [answer] = (await once(process, 'message')) as [T];
  return answer;
}

async function post(url: string, body?: unknown): Promise<{ sessionId: string }> {
  const response = await fetch(url, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { sessionId: string };
}

/** One session's reader: every event in order, each delta's delivery delay, the turn's end. */
class Reader {
  deltas = 0;
  text = '';
  lost = 0;
  duplicated = 0;
  readonly delays: number[] = [];
  postedAt = 0;
  finishedAt: number | undefined;
  #next = 0;
  #buffered = '';
  readonly finished: Promise<void>;
  #finish!: () => void;
  #close!: () => void;

  readonly url: string;

  constructor(url: string) {
    this.url = url;
    this.finished = new Promise((resolve) => (this.#finish = resolve));
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(this.url, { agent: false }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => this.#take(chunk));
        resolve();
      });
      this.#close = () => req.destroy();
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.#close();
  }

  #take(chunk: string): void {
    const now = Date.now();
    const lines = (this.#buffered + chunk).split('\n');
    this.#buffered = lines.pop()!;
    for (const line of lines) {
      if (line === '') continue;
      const event = JSON.parse(line) as { type: string; streamIndex: number; meta: { at: string }; data: { messageDelta?: string } };
      if (event.streamIndex < this.#next) this.duplicated += 1;
      else if (event.streamIndex > this.#next) this.lost += event.streamIndex - this.#next;
      this.#next = Math.max(this.#next, event.streamIndex + 1);
      if (event.type === 'message.appended') {
        this.deltas += 1;
        this.text += event.data.messageDelta;
        this.delays.push(now - Date.parse(event.meta.at));
      }
      if (event.type === 'turn.completed' || event.type === 'turn.failed') {
        this.finishedAt = performance.now();
        this.#finish();
      }
    }
  }
}

async function throughBridge(sessions: number): Promise<void> {
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=bridge-N${sessions}.cpuprofile`] : [];
  const bridge = child('./serve-bridge.ts', [], profile);
  const [{ url }] = (await once(bridge, 'message')) as [{ url: string }];
  try {
    const readers: Reader[] = [];
    for (let i = 0; i < sessions; i++) {
      const { sessionId } = await post(`${url}/eve/v1/session`);
      readers.push(new Reader(`${url}/eve/v1/session/${sessionId}/stream`));
    }
    await Promise.all(readers.map((r) => r.open()));
    await ask(bridge, 'mark');
    const started = performance.now();
    await Promise.all(
      readers.map(async (reader) => {
        reader.postedAt = performance.now();
        await post(reader.url.replace(/\/stream$/, ''), { message: `/sleep ${SLEEP_MS}` });
      }),
    );
    const timedOut = await Promise.race([
      Promise.all(readers.map((r) => r.finished)).then(() => false),
      new Promise<boolean>((resolve) => setTimeout(resolve, DEADLINE_MS, true).unref()),
    ]);
    const seconds = (performance.now() - started) / 1000;
    const { cpuMicros, rss } = await ask<Stats>(bridge, 'stats');
    for (const reader of readers) reader.close();

    const deltas = readers.reduce((sum, r) => sum + r.deltas, 0);
    const finished = readers.filter((r) => r.finishedAt !== undefined);
    const durations = finished.map((r) => (r.finishedAt! - r.postedAt) / 1000).sort((a, b) => a - b);
    const delays = readers.flatMap((r) => r.delays).sort((a, b) => a - b);
    const lost = readers.reduce((sum, r) => sum + r.lost + (r.finishedAt !== undefined && r.text !== TEXT_PER_TURN ? 1 : 0), 0);
    const duplicated = readers.reduce((sum, r) => sum + r.duplicated, 0);
    const baseline = await flueAlone(sessions);
    const full = FLUE_FULL ? await flueAlone(sessions, 'full') : undefined;
    const rate = deltas / seconds;
    const cpuPerDelta = cpuMicros / Math.max(1, deltas);
    console.log(`N=${sessions}: asked ${fmt(sessions * 200)} deltas/s for ${SLEEP_MS / 1000} s`);
    console.log(
      `  bridge      ${fmt(rate).padStart(6)} deltas/s delivered; turns ${finished.length}/${sessions} done${timedOut ? ' (deadline hit)' : ''}, ` +
        `duration p50 ${percentile(durations, 50).toFixed(1)} s max ${(durations.at(-1) ?? NaN).toFixed(1)} s (model: ${SLEEP_MS / 1000} s); ` +
        `delivery p50 ${percentile(delays, 50)} ms p99 ${percentile(delays, 99)} ms; ` +
        `CPU ${((cpuMicros / 1e6 / seconds) * 100).toFixed(0)}% of a core (${cpuPerDelta.toFixed(0)} µs/delta), RSS ${fmt(rss / 2 ** 20)} MiB; ` +
        `lost ${lost}, duplicated ${duplicated}`,
    );
    const flueRate = baseline.deltas / baseline.seconds;
    const flueDurations = baseline.durations.map((d) => d / 1000).sort((a, b) => a - b);
    const flueCpuPerDelta = baseline.cpuMicros / Math.max(1, baseline.deltas);
    console.log(
      `  Flue alone  ${fmt(flueRate).padStart(6)} deltas/s; turns ${baseline.durations.length}/${sessions} done${baseline.outcome === 'deadline' ? ' (deadline hit)' : ''}, ` +
        `duration p50 ${percentile(flueDurations, 50).toFixed(1)} s max ${(flueDurations.at(-1) ?? NaN).toFixed(1)} s; ` +
        `CPU ${((baseline.cpuMicros / 1e6 / baseline.seconds) * 100).toFixed(0)}% of a core (${flueCpuPerDelta.toFixed(0)} µs/delta), RSS ${fmt(baseline.rss / 2 ** 20)} MiB`,
    );
    if (full) {
      console.log(
        `  Flue alone, synchronous=FULL ${fmt(full.deltas / full.seconds)} deltas/s; turns ${full.durations.length}/${sessions} done; ` +
          `CPU ${((full.cpuMicros / 1e6 / full.seconds) * 100).toFixed(0)}% of a core (${(full.cpuMicros / Math.max(1, full.deltas)).toFixed(0)} µs/delta)`,
      );
    }
    console.log(
      `  ratio       bridge/Flue alone ${(rate / flueRate).toFixed(2)}; the bridge's own CPU per delta ` +
        `${Math.max(0, cpuPerDelta - flueCpuPerDelta).toFixed(0)} µs (${((Math.max(0, cpuPerDelta - flueCpuPerDelta) / cpuPerDelta) * 100).toFixed(0)}% of the stack's)`,
    );
  } finally {
    bridge.send('stop');
    await once(bridge, 'exit');
  }
}

async function flueAlone(sessions: number, synchronous: 'normal' | 'full' = 'normal'): Promise<{ outcome: string; seconds: number; deltas: number; durations: number[] } & Stats> {
  const flue = child('./flue-alone.ts', [String(sessions), String(SLEEP_MS), String(DEADLINE_MS), synchronous]);
  const [result] = (await once(flue, 'message')) as [{ outcome: string; seconds: number; deltas: number; durations: number[] } & Stats];
  await once(flue, 'exit');
  return result;
}

const uptime = await import('node:os').then((os) => os.loadavg().map((l) => l.toFixed(2)).join(' '));
console.log(`concurrent turns at model speed, one NDJSON reader each (Node ${process.version}, load average ${uptime})`);
for (const sessions of SIZES) await throughBridge(sessions);
