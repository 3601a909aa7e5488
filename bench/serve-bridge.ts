/**
 * The full stack for the benchmarks, in its own process so that its CPU and RSS are its own: the
 * demo agent on the scripted model, behind the bridge, SQLite stores in a temp dir, or with
 * `node bench/serve-bridge.ts <redis-url> <prefix> <token-key>` every store on that Redis.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@eve-flue/compat-server';
import { startBridge } from '@eve-flue/bridge';
import { startDemoStack } from '@eve-flue/demo';
import { answerStats } from './turn-load.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'eve-flue-bench-bridge-'));
const [redis, prefix, tokenKey] = process.argv.slice(2);
const store = redis ? { store: { redis, prefix: prefix! }, tokenKey: tokenKey! } : { store: 'sqlite' as const };
const demo = await startDemoStack({ ...store, dataDir, port: 0, mode: 'development', webPage: false });
const bridge = await startBridge(demo.config, { logger: silentLogger });
bridge.server.maxConnections = 20_000;
answerStats(async () => {
  await bridge.close();
  await demo.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
process.send!({ url: bridge.url });
