import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineFlueConnection, type BridgeConfig } from '@eve-flue/bridge';
import { scriptedModel } from '@eve-flue/bridge/testing';
import { Demo } from './agent.ts';
import {
  DEMO_MCP_SCOPE,
  startDemoAuthorizationServer,
  type DemoAuthorizationServer,
  type DemoAuthorizationServerOptions,
} from './authorization-server.ts';
import { createDemoMcpApp } from './mcp-server.ts';

export interface DemoStack {
  config: BridgeConfig;
  mcpUrl: string;
  authorizationServer: DemoAuthorizationServer;
  /** Closes the MCP server and the authorization server. */
  close(): Promise<void>;
}

export interface DemoStackOptions {
  /** Token and code lifetimes of the demo authorization server, in seconds. */
  ttl?: DemoAuthorizationServerOptions['ttl'];
  /** Clients registered with the demo authorization server up front (others register dynamically). */
  clients?: DemoAuthorizationServerOptions['clients'];
}

/**
 * The embedded demo: a Flue agent on a scripted model and a local MCP server (tools `echo`, and `whoami` behind
 * OAuth) mounted as connection `demo`, with its own local authorization server. Works offline; `overrides` adjust
 * the bridge settings.
 */
export async function startDemoStack(overrides: Partial<BridgeConfig> = {}, options: DemoStackOptions = {}): Promise<DemoStack> {
  // The authorization server needs the MCP URL and the MCP server needs its metadata: listen first, then attach.
  const mcp = createServer();
  mcp.listen(0, '127.0.0.1');
  await once(mcp, 'listening');
  const mcpUrl = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`;
  const closeMcp = async () => {
    mcp.closeAllConnections();
    await new Promise<void>((resolve) => mcp.close(() => resolve()));
  };
  let authorizationServer: DemoAuthorizationServer;
  try {
    authorizationServer = await startDemoAuthorizationServer({
      resource: mcpUrl,
      ...(options.ttl ? { ttl: options.ttl } : {}),
      ...(options.clients ? { clients: options.clients } : {}),
    });
    mcp.on('request', createDemoMcpApp({ mcpUrl, authorizationServer }));
  } catch (error) {
    await closeMcp();
    throw error;
  }
  const model = scriptedModel();
  const demo = defineFlueConnection({
    name: 'demo',
    url: mcpUrl,
    description: 'The demo MCP server',
    displayName: 'Demo',
    // No client id: the bridge discovers the authorization server from the 401 and registers itself.
    auth: { type: 'oauth2', scopes: [DEMO_MCP_SCOPE] },
  });
  return {
    mcpUrl,
    authorizationServer,
    config: { agent: Demo, providers: [model.provider], modelId: model.model, connections: [demo], ...overrides },
    async close() {
      await Promise.all([closeMcp(), authorizationServer.close()]);
    },
  };
}
