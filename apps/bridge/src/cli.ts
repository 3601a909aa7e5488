#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { startBridge } from './bridge.ts';
import { defineBridgeConfig, type BridgeConfig } from './config.ts';
import { startDemoStack } from './demo/index.ts';

const HELP = `eve-flue-bridge: serve Eve's session API (/eve/v1) on top of a Flue agent.

Usage:
  eve-flue-bridge start [--config <file>]   start the bridge (the default command)
  eve-flue-bridge --help                    show this help

Config: --config <file>, else ./bridge.config.ts if it exists, else the embedded demo
(a Flue agent on a scripted model with a local MCP server, no network or API key needed).
A config file default-exports defineBridgeConfig({ agent, connections, ... }).

Environment:
  PORT        port to listen on (default 3000)
  HOST        interface to listen on (default 127.0.0.1)
  DATA_DIR    where the journal and Flue's conversations live (default ./.data)
  PUBLIC_URL  the bridge's public origin and OAuth redirect base (default http://<HOST>:<port>)
  NODE_ENV    production requires route auth in the config
  LOG_LEVEL   pino level (default info)
  METRICS_PORT       serve Prometheus metrics on 127.0.0.1:<port>/metrics (default: off)
  SHUTDOWN_GRACE_MS  on SIGTERM, how long running turns get to finish (default 10000)

Signals: SIGTERM drains (readiness fails, no new turns, streams end resumably, leases are
released) and exits within SHUTDOWN_GRACE_MS + 20 s; SIGINT stops at once.
`;

/** How long after the grace period a draining process may take before it exits anyway. */
const SHUTDOWN_DEADLINE_MS = Number(process.env.SHUTDOWN_GRACE_MS ?? 10_000) + 20_000;

async function loadConfig(file: string | undefined): Promise<{ config: Readonly<BridgeConfig>; close?: () => Promise<void> }> {
  const path = file ? resolve(file) : resolve('bridge.config.ts');
  if (file || existsSync(path)) {
    const module = (await import(pathToFileURL(path).href)) as { default?: BridgeConfig };
    if (!module.default) throw new Error(`[eve-flue] ${path} has no default export; export defineBridgeConfig({...}).`);
    return { config: defineBridgeConfig(module.default) };
  }
  const demo = await startDemoStack();
  return { config: defineBridgeConfig(demo.config), close: () => demo.close() };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
  });
  const command = positionals[0] ?? 'start';
  if (values.help || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (command !== 'start') throw new Error(`[eve-flue] unknown command "${command}"; see --help`);
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'eve-flue-bridge' } });
  const { config, close } = await loadConfig(values.config);
  const bridge = await startBridge(config, { logger });
  logger.info({ url: bridge.url, api: `${bridge.url}/eve/v1`, demo: close !== undefined }, `bridge listening on ${bridge.url}`);
  if (close) logger.info({ page: `${bridge.url}/` }, `embedded demo: open ${bridge.url}/ and try "/tool connection__demo__echo {\\"text\\":\\"hi\\"}"`);
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    // Bounded: whatever hangs, the process is gone this long after the signal.
    setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS).unref();
    await (signal === 'SIGTERM' ? bridge.drain() : bridge.close());
    await close?.();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
