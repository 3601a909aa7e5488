/** The compat server for bench/idle-streams.ts, in its own process so its RSS is its own. */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createCompatServer, MemoryJournal } from '@eve-flue/compat-server';
import { ScriptedRuntime } from '../test/support/scripted-runtime.ts';

const compat = await createCompatServer({ runtime: new ScriptedRuntime(), journal: new MemoryJournal(), mode: 'development' });
const server = createServer(compat.app);
server.on('upgrade', compat.handleUpgrade);
server.maxConnections = 20_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const sessions: string[] = [];
for (let i = 0; i < 100; i++) sessions.push(await compat.sessions.execute({ kind: 'create' }));
process.on('message', (message) => {
  if (message === 'rss') {
    globalThis.gc?.();
    process.send!({ rss: process.memoryUsage().rss });
  }
});
process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sessions });
