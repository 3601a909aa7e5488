import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';

export interface EveMcpApp {
  /** The app's MCP endpoint (`/eve/v1/mcp`). */
  url: string;
  close(): Promise<void>;
}

const appDir = fileURLToPath(new URL('./eve-mcp-app/', import.meta.url));
const eveBin = join(dirname(createRequire(import.meta.url).resolve('eve/package.json')), 'bin', 'eve.js');

/**
 * Runs the real Eve app in `eve-mcp-app/` (Eve's own `mcpChannel`, `mockModel` from `eve/evals`)
 * with `eve dev --no-ui`, offline, admitting `tokens` (token → principal id) and advertising `issuer`.
 */
export async function startEveMcpApp({ tokens, issuer }: { tokens: Record<string, string>; issuer: string }): Promise<EveMcpApp> {
  const port = await freePort();
  const child = spawn(process.execPath, [eveBin, 'dev', '--no-ui', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: appDir,
    env: { ...process.env, EVE_MCP_FIXTURE_TOKENS: JSON.stringify(Object.entries(tokens)), EVE_MCP_FIXTURE_ISSUER: issuer, NO_COLOR: '1', NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: eve dev starts workers, and they end with it. NODE_ENV is not jest's
    // `test`: under it Eve swaps the authored model for its own mock.
    detached: true,
  });
  const output: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = once(child, 'exit').then(() => {
    throw new Error(`eve dev exited before it listened:\n${output.join('')}`);
  });
  const listening = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      output.push(line);
      if (line.includes('server listening at')) return;
    }
  })();
  await Promise.race([listening, exited]);
  child.stdout!.resume();
  return {
    url: `http://127.0.0.1:${port}/eve/v1/mcp`,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      process.kill(-child.pid!, 'SIGTERM');
      await gone;
    },
  };
}
