/**
 * The server for bench/idle-streams.ts, in its own process so its memory is its own:
 * `compat` (the compat server on a memory journal) or `bare` (a node:http server that holds each
 * request's chunked response open after one line, and a `ws` server that holds each connection).
 * Answers `memory` with its resident set after a full GC, its resident set after a memory-reducing
 * GC, and its heap in use.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { createCompatServer, MemoryJournal } from '@eve-flue/compat-server';
import { ScriptedRuntime } from '../test/support/scripted-runtime.ts';

const sessions: string[] = [];
let server: ReturnType<typeof createServer>;
if (process.argv[2] === 'bare') {
  const held: (ServerResponse | WebSocket)[] = [];
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => 'eve.v1' });
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/x-ndjson' });
    response.write('\n');
    held.push(response);
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => wss.handleUpgrade(request, socket, head, (ws) => held.push(ws)));
  for (let i = 0; i < 100; i++) sessions.push(`session_${i}`);
} else {
  const compat = await createCompatServer({ runtime: new ScriptedRuntime(), journal: new MemoryJournal(), mode: 'development' });
  server = createServer(compat.app);
  server.on('upgrade', compat.handleUpgrade);
  for (let i = 0; i < 100; i++) sessions.push(await compat.sessions.execute({ kind: 'create' }));
}
server.maxConnections = 20_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
process.on('message', (message) => {
  if (message !== 'memory') return;
  globalThis.gc!();
  const { rss } = process.memoryUsage();
  // What V8 does under memory pressure: also hands back the young generation it grew.
  (globalThis.gc as (options: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const { rss: reducedRss, heapUsed } = process.memoryUsage();
  process.send!({ rss, reducedRss, heap: heapUsed });
});
process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sessions });
