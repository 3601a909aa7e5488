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
import { once } from 'node:events';
import { fmt, percentile } from './lib.ts';
import { ask, child, post, Reader, SLEEP_MS, TEXT_PER_TURN, type Stats } from './turn-load.ts';

const SIZES = (process.argv[2] ?? process.env.CONCURRENT_TURNS_N ?? '50,200,500').split(',').map(Number);
const DEADLINE_MS = SLEEP_MS + Number(process.env.CONCURRENT_TURNS_DEADLINE_S ?? 60) * 1000;
const PROFILE_DIR = process.env.CONCURRENT_TURNS_CPU_PROF;
/** Also runs Flue alone on its own `sqlite()` (synchronous=FULL), to show what the bridge's setting saves. */
const FLUE_FULL = process.env.CONCURRENT_TURNS_FLUE_FULL === '1';

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
