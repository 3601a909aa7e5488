import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface CliBridge {
  url: string;
  child: ChildProcess;
  /** Every structured log line the process printed so far. */
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
  /** SIGKILL: nothing of the bridge's shutdown runs, as in a crash. */
  kill(): Promise<void>;
}

const cli = fileURLToPath(new URL('../../apps/bridge/src/bin.ts', import.meta.url));

/** Runs the bridge CLI (by default `demo`, what `pnpm start` runs) on a free port and a fresh data folder. */
export async function startCliBridge(
  env: Record<string, string> = {},
  args: readonly string[] = ['demo'],
  /** `bin`: another CLI file to run (e.g. an installed one); `cwd`: where to run it. */
  { bin = cli, cwd }: { bin?: string; cwd?: string } = {},
): Promise<CliBridge> {
  const dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-cli-'));
  const child = spawn(process.execPath, [bin, ...args], {
    ...(cwd ? { cwd } : {}),
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: Record<string, unknown>[] = [];
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.url === 'string' && String(entry.msg).startsWith('bridge listening')) resolve(entry.url);
    });
    child.once('exit', (code) => reject(new Error(`the bridge exited with ${code} before listening`)));
  });
  const url = await listening;
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return {
    url,
    child,
    logs,
    async stop() {
      await end('SIGTERM');
      await rm(dataDir, { recursive: true, force: true });
    },
    kill: () => end('SIGKILL'),
  };
}

/** Resolves once the bridge has logged `msg` (for `sessionId`, when given). */
export async function untilLogged(bridge: CliBridge, msg: string, sessionId?: string): Promise<void> {
  const seen = () => bridge.logs.some((l) => l.msg === msg && (sessionId === undefined || l.sessionId === sessionId));
  while (!seen()) await new Promise((resolve) => bridge.child.stdout!.once('data', resolve));
}
