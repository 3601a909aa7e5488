import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineFlueConnection } from '@eve-flue/connections';
import { createScriptedModel } from '@eve-flue/flue-adapter';
import type { BridgeConfig } from '../config.ts';
import { Demo } from './agent.ts';
import { createDemoMcpApp } from './mcp-server.ts';

export interface DemoStack {
  config: BridgeConfig;
  mcpUrl: string;
  close(): Promise<void>;
}

/**
 * The embedded demo: a Flue agent on a scripted model and a local MCP server (tool `echo`)
 * mounted as connection `demo`. Works offline; `overrides` adjust the bridge settings.
 */
export async function startDemoStack(overrides: Partial<BridgeConfig> = {}): Promise<DemoStack> {
  const mcp = createServer(createDemoMcpApp());
  mcp.listen(0, '127.0.0.1');
  await once(mcp, 'listening');
  const mcpUrl = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`;
  const model = createScriptedModel();
  return {
    mcpUrl,
    config: {
      agent: Demo,
      providers: [model.provider],
      modelId: model.model,
      connections: [defineFlueConnection({ name: 'demo', url: mcpUrl, description: 'The demo MCP server', displayName: 'Demo' })],
      ...overrides,
    },
    async close() {
      mcp.closeAllConnections();
      await new Promise<void>((resolve) => mcp.close(() => resolve()));
    },
  };
}
