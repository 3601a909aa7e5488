/**
 * The Flue-alone baseline of bench/soak.ts, in its own process: the same demo agent, scripted
 * model and `flue.db` store the bridge hands Flue, one short turn on each of `sessions` new
 * instances (8 at a time) with Flue's own API, and the resident set sampled as they accumulate.
 * It is also the minimal reproduction of what Flue keeps per instance it has ever served: its
 * coordinator holds each instance's conversation writer (with the conversation folded in memory)
 * for the life of the runtime, and has no API to let one go.
 * Run by soak.ts, or on its own: node --expose-gc bench/flue-soak.ts <sessions> <samples>
 */
import { init } from '@flue/runtime';
import { Demo, startFlueAlone } from './flue-demo.ts';
import { runSoak, secondHalfSlope } from './soak-lib.ts';

const [sessions, samples] = process.argv.slice(2, 4).map(Number) as [number, number];

const flue = await startFlueAlone();
const memory = () => {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return Promise.resolve({ rss, heapUsed });
};
const turn = async (i: number) => {
  const handle = init(Demo, { id: `soak-${i}` });
  await handle.read(await handle.dispatch({ message: `hello ${i}` }));
};
const result = await runSoak({ sessions, samples, turn, memory });
const first = init(Demo, { id: 'soak-0' });
const recall = (await first.read(await first.dispatch({ message: '/recall' }))).text;
if (process.send) process.send({ ...result, recall });
else {
  // Run on its own (the reproduction): the samples, and the slope over the second half.
  for (const s of result.samples) console.log(`${s.sessions}\tRSS ${(s.rss / 2 ** 20).toFixed(1)} MiB\theap ${(s.heapUsed / 2 ** 20).toFixed(1)} MiB`);
  console.log(`second half: ${(secondHalfSlope(result.samples, 'heapUsed') / 1024).toFixed(1)} KiB/instance heap, ${(secondHalfSlope(result.samples, 'rss') / 1024).toFixed(1)} KiB/instance RSS; ${recall}`);
}
await flue.stop();
process.exit(0);
