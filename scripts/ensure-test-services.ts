/**
 * Makes sure what the test suite needs outside npm is on this machine: Debian's Chromium for
 * the browser tests. Installs it with apt-get when missing and running as root; otherwise
 * stops with a message saying what to install. Never skips: a missing browser fails the run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function run(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

if (!existsSync(CHROMIUM)) {
  if (process.getuid?.() !== 0) {
    process.stderr.write(`Chromium is missing at ${CHROMIUM}. Install it (Debian: apt-get install -y chromium) or set CHROMIUM_PATH.\n`);
    process.exit(1);
  }
  process.stdout.write('Installing Debian chromium for the browser tests...\n');
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
}
