import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createCompatServer, MemoryJournal, SqliteJournal, type CompatServer, type Logger } from '@eve-flue/compat-server';
import { ConnectionRegistry, flueMountFor, type ConnectionStatus } from '@eve-flue/connections';
import { FlueRuntime } from '@eve-flue/flue-adapter';
import { join } from 'node:path';
import type { BridgeConfig } from './config.ts';
import { webPage } from './web-page.ts';

export interface RunningBridge {
  url: string;
  server: Server;
  compat: CompatServer;
  connections: ConnectionRegistry;
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
}

/** Starts the bridge: connections checked, Flue runtime started, `/eve/v1` served. */
export async function startBridge(config: Readonly<BridgeConfig>, { logger }: StartOptions): Promise<RunningBridge> {
  const dataDir = config.dataDir ?? process.env.DATA_DIR ?? '.data';
  const durable = (config.store ?? 'sqlite') === 'sqlite';
  const connections = new ConnectionRegistry(config.connections ?? [], (definition) => flueMountFor(definition).fetch);
  logConnections(logger, await connections.refresh());

  const runtime = await FlueRuntime.start({
    agent: config.agent,
    modelId: config.modelId ?? 'unknown',
    connections,
    mountConnection: (name) => flueMountFor(connections.definition(name)),
    logger,
    ...(config.providers ? { providers: config.providers } : {}),
    ...(durable ? { dataDir } : {}),
  });
  const compat = await createCompatServer({
    runtime,
    journal: durable ? new SqliteJournal(join(dataDir, 'journal.db')) : new MemoryJournal(),
    logger,
    ...(config.mode ? { mode: config.mode } : {}),
    ...(config.auth ? { auth: config.auth } : {}),
    ...(config.cors !== undefined ? { cors: config.cors } : {}),
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(compat.app);
  if (config.webPage ?? config.mode !== 'production') app.use(webPage());

  const server = createServer(app);
  server.listen(config.port ?? Number(process.env.PORT ?? 3000), config.host ?? process.env.HOST ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host ?? process.env.HOST ?? '127.0.0.1'}:${port}`;
  return {
    url,
    server,
    compat,
    connections,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await compat.close();
    },
  };
}

function logConnections(logger: Logger, statuses: ConnectionStatus[]): void {
  for (const status of statuses) {
    if (status.state === 'ready') logger.info({ connection: status.name, tools: status.tools }, 'connection ready');
    else logger.warn({ connection: status.name, state: status.state, missing: status.missing }, 'connection not ready');
  }
}
