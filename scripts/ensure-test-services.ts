/**
 * Makes sure what the test suite needs outside npm is on this machine:
 * - Debian's Chromium, for the browser tests;
 * - a Redis server on REDIS_URL (default 127.0.0.1:6379), for the multi-instance tests.
 * Installs (apt-get, as root) and starts what is missing; otherwise stops with a message saying
 * what to install. Never skips: a missing service fails the run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

function run(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function aptInstall(packages: string[], why: string): void {
  if (process.getuid?.() !== 0) {
    process.stderr.write(`${why} Install it (Debian: apt-get install -y ${packages.join(' ')}).\n`);
    process.exit(1);
  }
  process.stdout.write(`Installing ${packages.join(', ')} for the tests...\n`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages]);
}

function reachable(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 6379) });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not come up`);
}

if (!existsSync(CHROMIUM)) aptInstall(['chromium'], `Chromium is missing at ${CHROMIUM} (or set CHROMIUM_PATH).`);

if (!(await reachable(REDIS))) {
  if (!['127.0.0.1', 'localhost'].includes(REDIS.hostname)) {
    process.stderr.write(`Redis at ${REDIS.host} is not reachable.\n`);
    process.exit(1);
  }
  if (!existsSync('/usr/bin/redis-server')) aptInstall(['redis-server'], 'redis-server is missing.');
  const port = REDIS.port || '6379';
  run('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', port, '--save', '', '--appendonly', 'no']);
  await waitFor(() => reachable(REDIS), `Redis on port ${port}`);
}
