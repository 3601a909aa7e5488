/**
 * The round-robin balancer of bench/scale-out.ts in its own process, as in a deployment: its CPU
 * is its own, not the load generator's. `node bench/serve-balancer.ts <upstream> <upstream>...`
 */
import { startBalancer } from '../test/support/balancer.ts';
import { answerStats } from './turn-load.ts';

const balancer = await startBalancer(process.argv.slice(2));
answerStats(async () => {
  await balancer.close();
  process.exit(0);
});
process.send!({ url: balancer.url });
