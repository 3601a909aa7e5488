import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EveParentApp {
  url: string;
  /** What the app printed, for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

const FIXTURE = fileURLToPath(new URL('./eve-parent-app', import.meta.url));
const ROOT_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));

/** Where the `eve` CLI is. */
export const EVE_BIN = join(ROOT_MODULES, 'eve', 'bin', 'eve.js');

/**
 * The environment an `eve` command runs in, as a developer runs it: this Node first on PATH (Eve
 * starts its servers with `node` from PATH), and not the test runner's NODE_ENV=test or NODE_OPTIONS.
 */
export function eveEnvironment(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(inherited)) if (name === 'NODE_ENV' || name === 'NODE_OPTIONS' || name.startsWith('JEST_')) delete inherited[name];
  return { ...inherited, ...env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '1' };
}

/**
 * Runs the Eve app in `eve-parent-app/` with `eve dev --no-ui` (offline: its model is
 * `mockModel`), from a copy in a fresh folder that sees this repository's `node_modules`, on a
 * free port. `env` reaches the app (the bridge URLs its remote agents call).
 */
export async function startEveParentApp(env: Record<string, string>): Promise<EveParentApp> {
  const dir = await mkdtemp(join(tmpdir(), 'eve-parent-app-'));
  await cp(FIXTURE, dir, { recursive: true });
  await symlink(ROOT_MODULES, join(dir, 'node_modules'), 'dir');
  const child: ChildProcess = spawn(process.execPath, [EVE_BIN, 'dev', '--no-ui', '--no-default-extensions', '--host', '127.0.0.1', '--port', '0'], {
    cwd: dir,
    env: eveEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let printed = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      printed += chunk.toString();
      const listening = /server listening at (http:\/\/[^\s/]+)/.exec(printed);
      if (listening) resolve(listening[1]!);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`eve dev exited with ${code} before listening:\n${printed}`)));
  });
  return {
    url,
    output: () => printed,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        // eve dev runs its server in a child process of its own: end the whole group.
        process.kill(-child.pid!, 'SIGTERM');
        const forced = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
        await exited;
        clearTimeout(forced);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
