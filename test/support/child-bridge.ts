import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ChildBridge {
  url: string;
  child: ChildProcess;
  /** SIGKILL: no shutdown code runs, as in a crash. */
  kill(): Promise<void>;
}

const script = fileURLToPath(new URL('./serve-scripted.ts', import.meta.url));

/** Starts `serve-scripted.ts` in a new Node process on `dataDir` and waits for its URL. */
export async function startChildBridge(dataDir: string): Promise<ChildBridge> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(() => {
    throw new Error('The bridge process exited before it listened.');
  });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string];
  const { url } = JSON.parse(line) as { url: string };
  return {
    url,
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    },
  };
}
