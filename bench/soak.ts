/**
 * Memory of a long-running bridge: N sessions of one short turn each (8 at a time), every other
 * one calling the demo's connection tool `connection__demo__echo`, through the real `eve/client`
 * against a bridge process (demo agent on the scripted model, SQLite stores in a temp dir). The
 * bridge's resident set (after a full GC) is sampled as sessions accumulate, and its slope over
 * the second half printed per session; then the first session, idle since the start (evicted),
 * is asked `/recall`: the agent must still remember its first message. In the same run, Flue
 * alone (bench/flue-soak.ts) serves the same number of one-turn instances: the baseline.
 * Run: node bench/soak.ts [N,N,...] (default 1000,5000; or SOAK_N); SOAK_BASELINE=off skips Flue alone. The bridge runs with its
 * default idleSessionMs and maxResidentSessions unless IDLE_SESSION_MS / MAX_RESIDENT_SESSIONS say otherwise.
 */
import { once } from 'node:events';
import { Client } from 'eve/client';
import { fmt } from './lib.ts';
import { runSoak, secondHalfSlope, type Sample, type SoakResult } from './soak-lib.ts';
import { ask, child } from './turn-load.ts';

const SIZES = (process.argv[2] ?? process.env.SOAK_N ?? '1000,5000').split(',').map(Number);
const SAMPLES = 40;
/** SOAK_BASELINE=off skips Flue alone (a long run on a busy machine); its figures then come from another run. */
const BASELINE = process.env.SOAK_BASELINE !== 'off';
const TOOL = '/tool connection__demo__echo {"text":"soak"}';

const GC = ['--expose-gc'];

interface BridgeRun extends SoakResult {
  recall: string;
  wrong: number;
}

async function soakBridge(sessions: number): Promise<BridgeRun> {
  const bridge = child('./serve-bridge.ts', [], GC);
  const [{ url }] = (await once(bridge, 'message')) as [{ url: string }];
  const client = new Client({ host: url });
  let first: string | undefined;
  let wrong = 0;
  let taken = 0;
  try {
    const result = await runSoak({
      sessions,
      samples: SAMPLES,
      memory: () => ask(bridge, 'memory'),
      // Every tenth of the way, so that a run cut short still says how far memory went.
      onSample: (s) => void (++taken % (SAMPLES / 10) === 0 && console.log(`    bridge after ${fmt(s.sessions)} sessions: RSS ${mib(s.rss)} MiB, heap ${mib(s.heapUsed)} MiB`)),
      async turn(i) {
        const message = i % 2 === 1 ? TOOL : `hello ${i}`;
        const { session, response } = await client.sessions.create({ message });
        if (i === 0) first = session.state.sessionId;
        const reply = (await response!.result()).message ?? '';
        if (reply !== (i % 2 === 1 ? 'Tool connection__demo__echo returned: soak' : `Echo: hello ${i}`)) wrong += 1;
      },
    });
    const recall = (await (await client.sessions.attach(first!).send('/recall')).result()).message ?? '';
    return { ...result, recall, wrong };
  } finally {
    bridge.send('stop');
    await once(bridge, 'exit');
  }
}

async function soakFlue(sessions: number): Promise<SoakResult & { recall: string }> {
  const flue = child('./flue-soak.ts', [String(sessions), String(SAMPLES)], GC);
  const [result] = (await once(flue, 'message')) as [SoakResult & { recall: string }];
  await once(flue, 'exit');
  return result;
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const at = (samples: readonly Sample[], sessions: number) => samples.reduce((best, s) => (Math.abs(s.sessions - sessions) < Math.abs(best.sessions - sessions) ? s : best));

function describe(name: string, run: SoakResult): { rssSlope: number; heapSlope: number } {
  const { samples } = run;
  const rssSlope = secondHalfSlope(samples, 'rss');
  const heapSlope = secondHalfSlope(samples, 'heapUsed');
  const [start, end] = [samples[0]!, samples.at(-1)!];
  console.log(
    `  ${name.padEnd(12)} ${fmt(end.sessions)} sessions in ${run.seconds.toFixed(0)} s: RSS ${mib(start.rss)} → ${mib(end.rss)} MiB, heap ${mib(start.heapUsed)} → ${mib(end.heapUsed)} MiB; ` +
      `second half: ${kib(rssSlope)} KiB/session RSS, ${kib(heapSlope)} KiB/session heap`,
  );
  return { rssSlope, heapSlope };
}

console.log(`soak: N one-turn sessions (8 at a time, every other one calling connection__demo__echo), memory after a full GC, ${SAMPLES} samples`);
console.log(`  bridge settings: idleSessionMs ${process.env.IDLE_SESSION_MS ?? 'default'}, maxResidentSessions ${process.env.MAX_RESIDENT_SESSIONS ?? 'default'}`);
for (const sessions of SIZES) {
  console.log(`N = ${fmt(sessions)}`);
  const flue = BASELINE ? await soakFlue(sessions) : undefined;
  const baseline = flue && describe('Flue alone', flue);
  const bridge = await soakBridge(sessions);
  const measured = describe('bridge', bridge);
  const ratio = (a: number, b: number) => (Math.abs(b) < 1 ? 'n/a' : (a / b).toFixed(2));
  if (baseline) console.log(`  ratio bridge / Flue alone, second-half slope: RSS ${ratio(measured.rssSlope, baseline.rssSlope)}×, heap ${ratio(measured.heapSlope, baseline.heapSlope)}×`);
  else console.log('  no Flue-alone baseline in this run (SOAK_BASELINE=off)');
  if (sessions > 5_000) console.log(`  bridge RSS at 5,000 sessions ${mib(at(bridge.samples, 5_000).rss)} MiB, at ${fmt(sessions)} ${mib(bridge.samples.at(-1)!.rss)} MiB`);
  console.log(`  turns with a wrong or missing reply: ${bridge.wrong}`);
  console.log(`  first session (idle since the start) asked /recall: ${bridge.recall.slice(0, 120)}`);
  if (flue) console.log(`  Flue alone, first instance asked /recall: ${flue.recall.slice(0, 120)}`);
}
