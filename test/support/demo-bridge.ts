import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { silentLogger, type Logger } from '@eve-flue/compat-server';
import { startBridge, type BridgeConfig, type RunningBridge } from '@eve-flue/bridge';
import { startDemoStack, type DemoStack, type DemoStackOptions } from '@eve-flue/demo';
import type { FlueConnectionDefinition } from '@eve-flue/connections';

export interface DemoBridge extends RunningBridge {
  mcpUrl: string;
  authorizationServer: DemoStack['authorizationServer'];
}

/** The embedded demo stack (real Flue, scripted model, real MCP server) on a free port. */
export async function startDemoBridge(
  overrides: Partial<BridgeConfig> | ((demo: DemoStack) => Partial<BridgeConfig> | Promise<Partial<BridgeConfig>>) = {},
  logger: Logger = silentLogger,
  stack: DemoStackOptions = {},
): Promise<DemoBridge> {
  const dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-demo-'));
  const demo = await startDemoStack({ dataDir, port: 0, mode: 'development' }, stack);
  const config = { ...demo.config, ...(typeof overrides === 'function' ? await overrides(demo) : overrides) };
  const bridge = await startBridge(config, { logger });
  return {
    ...bridge,
    mcpUrl: demo.mcpUrl,
    authorizationServer: demo.authorizationServer,
    async close() {
      await bridge.close();
      await demo.close();
      try {
        assertEveNamesOnly(join(dataDir, 'journal.db'));
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Eve names, always: no event a demo bridge journaled carries a Flue `mcp__` tool name. Checked
 * over every event of every test that runs a demo bridge, when it closes.
 */
function assertEveNamesOnly(journalFile: string): void {
  if (!existsSync(journalFile)) return;
  const db = new DatabaseSync(journalFile, { readOnly: true });
  try {
    const leaks = db.prepare("SELECT session_id, type, line FROM event_log WHERE instr(line, 'mcp__') > 0 LIMIT 3").all();
    if (leaks.length > 0) throw new Error(`events carry Flue tool names: ${JSON.stringify(leaks)}`);
  } finally {
    db.close();
  }
}

/** The demo's own connections (a list, never a per-caller resolver), to add others next to them. */
export function demoConnections(demo: DemoStack): readonly Readonly<FlueConnectionDefinition>[] {
  const connections = demo.config.connections ?? [];
  if (typeof connections === 'function') throw new Error('the demo lists its connections');
  return connections;
}
