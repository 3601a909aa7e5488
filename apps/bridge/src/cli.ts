import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startBridge } from './bridge.ts';
import { checkConnections } from './check.ts';
import { defineBridgeConfig, type BridgeConfig } from './config.ts';
import { DEFAULT_CONFIG_FILE, loadConfigFile } from './config-file.ts';
import { writeStarterFiles } from './init.ts';
import { VARIABLES } from './settings.ts';

const HELP = () => `eve-flue-bridge: serve Eve's session API (/eve/v1) on top of a Flue agent.

Usage:
  eve-flue-bridge start [--config <file>]   start the bridge (the default command)
  eve-flue-bridge check [--config <file>]   connect every connection once; exit 1 if any is not ready
  eve-flue-bridge init                      write a commented bridge.config.ts and .env.example here
  eve-flue-bridge demo                      run the demo (needs the @eve-flue/demo package)
  eve-flue-bridge --help | --version

Config: --config <file>, default ./${DEFAULT_CONFIG_FILE}, a TypeScript module (run with Node's
type stripping) whose default export is defineBridgeConfig({ agent, connections, ... }).
start and check read ./.env first when it exists.

Environment (a value in the config wins):
${environmentHelp()}

Signals: SIGTERM drains (readiness fails, no new turns, streams end resumably, leases are
released) and exits within the grace period (shutdownGraceMs, else SHUTDOWN_GRACE_MS) + 20 s;
SIGINT stops at once.
`;

/** How long after the grace period a draining process may take before it exits anyway. */
const DEADLINE_AFTER_GRACE_MS = 20_000;

/** One line per environment variable of the settings table, the names aligned. */
function environmentHelp(): string {
  const width = Math.max(...VARIABLES.map((variable) => variable.name.length)) + 2;
  return VARIABLES.map((variable) => `  ${variable.name.padEnd(width)}${variable.help}`).join('\n');
}

const DEMO_PACKAGE = '@eve-flue/demo';

interface DemoModule {
  startDemoStack(): Promise<{ config: BridgeConfig; close(): Promise<void> }>;
}

/** A mistake in how the CLI was called: one line, exit code 2. */
class UsageError extends Error {}

function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
    });
  } catch (error) {
    // Node's own message goes on to explain `--`; its first sentence names the flag.
    throw new UsageError(`[eve-flue] ${(error as Error).message.split('. ')[0]}; see eve-flue-bridge --help`);
  }
}

function loadDotEnv(): void {
  if (existsSync('.env')) process.loadEnvFile('.env');
}

/** The demo lives in its own package, so that a production install does not carry its OAuth server. */
async function importDemo(): Promise<DemoModule> {
  try {
    return (await import(DEMO_PACKAGE)) as DemoModule;
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND' || !String((error as Error).message).includes(DEMO_PACKAGE)) throw error;
    throw new UsageError(`[eve-flue] the demo is the ${DEMO_PACKAGE} package: npm install --save-dev ${DEMO_PACKAGE}`);
  }
}

async function serve(config: Readonly<BridgeConfig>, demo?: { close(): Promise<void> }): Promise<void> {
  const bridge = await startBridge(config);
  const { logger } = bridge;
  logger.info({ url: bridge.url, api: `${bridge.url}/eve/v1`, demo: demo !== undefined }, `bridge listening on ${bridge.url}`);
  if (demo) logger.info({ page: `${bridge.url}/` }, `demo: open ${bridge.url}/ and try "/tool connection__demo__echo {\\"text\\":\\"hi\\"}"`);
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    // Bounded: whatever hangs, the process is gone this long after the signal.
    setTimeout(() => process.exit(1), bridge.settings.shutdownGraceMs + DEADLINE_AFTER_GRACE_MS).unref();
    await (signal === 'SIGTERM' ? bridge.drain() : bridge.close());
    await demo?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

async function main(): Promise<number | undefined> {
  const { values, positionals } = parse();
  if (values.help || positionals[0] === 'help') return void process.stdout.write(HELP());
  if (values.version) return void process.stdout.write(`${version()}\n`);
  const [command = 'start', ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`[eve-flue] unexpected argument "${extra[0]}"; see eve-flue-bridge --help`);
  if (values.config !== undefined && command !== 'start' && command !== 'check') throw new UsageError(`[eve-flue] --config applies to start and check, not ${command}`);
  switch (command) {
    case 'start': {
      loadDotEnv();
      return void (await serve(await loadConfigFile(values.config)));
    }
    case 'check': {
      loadDotEnv();
      const result = await checkConnections(await loadConfigFile(values.config));
      process.stdout.write(result.lines.map((line) => `${line}\n`).join(''));
      return result.ready ? 0 : 1;
    }
    case 'init': {
      for (const name of writeStarterFiles(process.cwd())) process.stdout.write(`wrote ${name}\n`);
      process.stdout.write('next: eve-flue-bridge check, then eve-flue-bridge start\n');
      return 0;
    }
    case 'demo': {
      const demo = await (await importDemo()).startDemoStack();
      return void (await serve(defineBridgeConfig(demo.config), demo));
    }
    default:
      throw new UsageError(`[eve-flue] unknown command "${command}"; see eve-flue-bridge --help`);
  }
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
