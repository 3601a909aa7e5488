import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startCliBridge } from './support/cli-bridge.ts';

/** Two bridge processes on one DATA_DIR: the second refuses to start, with a line saying why. */
const cli = fileURLToPath(new URL('../apps/bridge/src/bin.ts', import.meta.url));

/** Runs `eve-flue-bridge demo` on `dataDir` until it exits; what it wrote to stderr and its exit code. */
async function failedStart(dataDir: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cli, 'demo'], { env: { ...process.env, PORT: '0', DATA_DIR: dataDir, NODE_ENV: 'development' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

describe('the data folder lock', () => {
  test('a second bridge on the same DATA_DIR fails at start; once the first dies, even killed, the folder is free', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-lock-'));
    try {
      const first = await startCliBridge({ DATA_DIR: dataDir });
      const second = await failedStart(dataDir);
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`[eve-flue] the data folder ${dataDir} is in use by another bridge process: stop it, or give this one its own DATA_DIR (several instances share sessions through a Redis store, not through one folder)\n`);
      // The first one is unharmed.
      const { response } = await new Client({ host: first.url }).sessions.create({ message: 'still here' });
      expect((await response!.result()).message).toBe('Echo: still here');
      await first.kill();
      const third = await startCliBridge({ DATA_DIR: dataDir });
      const { response: again } = await new Client({ host: third.url }).sessions.create({ message: 'after a crash' });
      expect((await again!.result()).message).toBe('Echo: after a crash');
      await third.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
