import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';

/**
 * The CLI's exit deadline follows the grace period the bridge resolved (here from the config),
 * not the environment's: a grace above the old fixed 30 s is served in full and the process then
 * exits cleanly.
 */
const CONFIG = fileURLToPath(new URL('../apps/bridge/test/fixtures/long-grace.config.ts', import.meta.url));
const GRACE_MS = 33_000;

let bridge: CliBridge | undefined;
afterAll(() => bridge?.kill());

test('SIGTERM mid-turn with a config grace of 33 s (SHUTDOWN_GRACE_MS says 1 s): the turn gets the whole grace, then exit 0', async () => {
  bridge = await startCliBridge({ CONFIG_GRACE_MS: String(GRACE_MS), SHUTDOWN_GRACE_MS: '1000' }, ['start', '--config', CONFIG]);
  const client = new Client({ host: bridge.url });
  const { session } = await client.sessions.create({ message: '/sleep 120000' });
  const live = session.stream({ startIndex: 0 })[Symbol.asyncIterator]();
  for (;;) {
    const { value, done } = await live.next();
    if (done) throw new Error('the stream ended before the turn streamed');
    if (value.type === 'message.appended') break;
  }
  const exited = once(bridge.child, 'exit');
  const signalled = Date.now();
  bridge.child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  const exitMs = Date.now() - signalled;
  process.stdout.write(`[shutdown-grace] SIGTERM to exit: ${exitMs} ms (grace ${GRACE_MS} ms)\n`);
  await live.return?.();
  expect(code).toBe(0);
  expect(bridge.logs.find((line) => String(line.msg).startsWith('draining'))).toMatchObject({ graceMs: GRACE_MS });
  expect(bridge.logs.some((line) => String(line.msg).startsWith('turns still running after the grace period'))).toBe(true);
  expect(exitMs).toBeGreaterThanOrEqual(GRACE_MS);
}, 90_000);
