/**
 * Events/s for one session fanned out to 100 readers through the compat server, over NDJSON and
 * over WebSocket, against a bare node:http NDJSON writer doing the least possible work, in the
 * same run.
 * Run: pnpm bench (or node bench/fanout.ts [events] [readers]).
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompatServer, MemoryJournal, SqliteJournal, type Journal } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';
import { ScriptedRuntime } from '../test/support/scripted-runtime.ts';
import { countFrames, countLines, fmt, openReaders, openWebSocketReaders } from './lib.ts';

const EVENTS = Number(process.argv[2] ?? 20_000);
const READERS = Number(process.argv[3] ?? 100);
const delta = (i: number): EveEventDraft => ({
  type: 'message.appended',
  data: { messageDelta: `token ${i} `, sequence: 0, stepIndex: 0, turnId: 'turn_0' },
});

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The floor: one prebuilt line per event written to every response, no journal, no envelope. */
async function bareNodeHttp(): Promise<number> {
  const responses: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('\n');
    responses.push(res);
  });
  const url = await listen(server);
  const readers = await openReaders(url, READERS);
  const done = Promise.all(readers.map((r) => countLines(r, EVENTS)));
  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    const line = `${JSON.stringify({ type: 'message.appended', data: delta(i).data, meta: { id: `evt_${i}`, at: new Date().toISOString() }, streamIndex: i })}\n`;
    for (const res of responses) res.write(line);
    if (i % 256 === 255) await new Promise(setImmediate);
  }
  await done;
  const seconds = (performance.now() - started) / 1000;
  server.closeAllConnections();
  server.close();
  return EVENTS / seconds;
}

async function compat(journal: Journal, transport: 'ndjson' | 'websocket' = 'ndjson'): Promise<number> {
  const compatServer = await createCompatServer({
    runtime: new ScriptedRuntime(),
    journal,
    mode: 'development',
    stream: { heartbeatMs: 60_000, leaseMs: 600_000, maxBufferedBytes: 64 * 1024 * 1024 },
  });
  const server = createServer(compatServer.app);
  server.on('upgrade', compatServer.handleUpgrade);
  const url = await listen(server);
  const sessionId = await compatServer.sessions.execute({ kind: 'create' });
  const done =
    transport === 'ndjson'
      ? Promise.all((await openReaders(`${url}/eve/v1/session/${sessionId}/stream`, READERS)).map((r) => countLines(r, EVENTS)))
      : Promise.all((await openWebSocketReaders(`${url.replace('http', 'ws')}/eve/v1/session/${sessionId}/ws`, READERS)).map((s) => countFrames(s, EVENTS)));
  const started = performance.now();
  for (let i = 0; i < EVENTS; i += 64) {
    await journal.append(sessionId, Array.from({ length: Math.min(64, EVENTS - i) }, (_, k) => delta(i + k)));
    await new Promise(setImmediate);
  }
  await done;
  const seconds = (performance.now() - started) / 1000;
  server.closeAllConnections();
  server.close();
  await compatServer.close();
  return EVENTS / seconds;
}

const dir = mkdtempSync(join(tmpdir(), 'eve-flue-bench-'));
try {
  console.log(`one session, ${fmt(EVENTS)} events, ${READERS} readers (Node ${process.version})`);
  const bare = await bareNodeHttp();
  const memory = await compat(new MemoryJournal());
  const sqlite = await compat(new SqliteJournal(join(dir, 'bench.db')));
  const webSocket = await compat(new MemoryJournal(), 'websocket');
  console.log(`bare node:http writer           ${fmt(bare).padStart(9)} events/s`);
  console.log(`compat NDJSON, memory journal   ${fmt(memory).padStart(9)} events/s  (${(memory / bare).toFixed(2)} of bare)`);
  console.log(`compat NDJSON, SQLite journal   ${fmt(sqlite).padStart(9)} events/s  (${(sqlite / bare).toFixed(2)} of bare)`);
  console.log(`compat WebSocket, memory        ${fmt(webSocket).padStart(9)} events/s  (${(webSocket / memory).toFixed(2)} of NDJSON)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
