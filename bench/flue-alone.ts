/**
 * The Flue-alone baseline of bench/concurrent-turns.ts, in its own process: the same demo agent,
 * scripted model and `flue.db` store the bridge hands Flue, running the same turns with Flue's
 * own API (`init`, `dispatch`, `read`) and no bridge. Reports over IPC.
 * Run by concurrent-turns.ts: node bench/flue-alone.ts <sessions> <sleepMs> <deadlineMs> [full]
 */
import { init, observe } from '@flue/runtime';
import { Demo, startFlueAlone } from './flue-demo.ts';

const [sessions, sleepMs, deadlineMs] = process.argv.slice(2, 5).map(Number) as [number, number, number];
/** `full`: Flue's own `sqlite()` with SQLite's default synchronous=FULL, to show what the bridge's setting saves. */
const synchronousFull = process.argv[5] === 'full';

const flue = await startFlueAlone(synchronousFull);
let deltas = 0;
const unobserve = observe((o) => {
  if (o.type === 'text_delta') deltas += 1;
});
const cpuFrom = process.cpuUsage();
const started = performance.now();
const durations: number[] = [];
const turns = Array.from({ length: sessions }, async (_, i) => {
  const handle = init(Demo, { id: `bench-${i}` });
  const posted = performance.now();
  const receipt = await handle.dispatch({ message: `/sleep ${sleepMs}` });
  await handle.read(receipt);
  durations.push(performance.now() - posted);
});
const deadline = new Promise<'deadline'>((resolve) => setTimeout(resolve, deadlineMs, 'deadline').unref());
const outcome = await Promise.race([Promise.all(turns).then(() => 'done' as const), deadline]);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuFrom);
process.send!({ outcome, seconds, deltas, durations, cpuMicros: cpu.user + cpu.system, rss: process.memoryUsage().rss }, () => {
  unobserve();
  void flue.stop().finally(() => process.exit(0));
});
