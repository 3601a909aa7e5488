/**
 * Events/s for one session fanned out to 100 readers through the compat server, over NDJSON and
 * over WebSocket, against bare writers doing the least possible work, in the same run: per
 * transport a naive one (one write per event per reader) and a corked one (each tick's events
 * in one write per reader: joined lines for node:http, frames under one cork for ws), the
 * socket's limit. Every writer gets the same 64 events a tick. The readers run in processes of
 * their own and do the least their transport allows (bench/fanout-readers.ts). The writers run in
 * rounds, each round every writer once, so that what else the machine does weighs on all of them
 * alike; each figure is the median of the rounds (default 3).
 * Run: pnpm bench (or node bench/fanout.ts [events] [readers] [rounds]).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompatServer, MemoryJournal, SqliteJournal, type Journal } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';
import { ScriptedRuntime } from '../test/support/scripted-runtime.ts';
import { fmt, median } from './lib.ts';

const EVENTS = Number(process.argv[2] ?? 20_000);
const READERS = Number(process.argv[3] ?? 100);
const ROUNDS = Number(process.argv[4] ?? 3);
const delta = (i: number): EveEventDraft => ({
  type: 'message.appended',
  data: { messageDelta: `token ${i} `, sequence: 0, stepIndex: 0, turnId: 'turn_0' },
});

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const PER_TICK = 64;

/** Reader processes, so that the readers are not what limits the writers. */
const READER_PROCESSES = 2;

/** Starts the readers (bench/fanout-readers.ts) once they are all open; `done` when each has every event. */
async function readersOf(url: string, transport: 'ndjson' | 'websocket'): Promise<{ done: Promise<void> }> {
  const processes = Array.from({ length: READER_PROCESSES }, (_, i) => {
    const share = Math.floor(READERS / READER_PROCESSES) + (i < READERS % READER_PROCESSES ? 1 : 0);
    return fork(fileURLToPath(new URL('./fanout-readers.ts', import.meta.url)), [url, transport, String(share), String(EVENTS)]);
  });
  // A reader process that fails (e.g. out of local ports) exits before it says `open`: stop, do not wait.
  await Promise.all(
    processes.map(
      (p) =>
        new Promise((resolve, reject) => {
          p.once('message', resolve);
          p.once('exit', (code) => reject(new Error(`a reader process exited (code ${code}) before its readers were open`)));
        }),
    ),
  );
  const finished = processes.map((p) => {
    const exited = once(p, 'exit');
    return once(p, 'message').then(() => exited);
  });
  return { done: Promise.all(finished).then(() => undefined) };
}

interface Run {
  eventsPerSecond: number;
  /** This process's CPU (the writer's) per line delivered to one reader. */
  cpuMicrosPerLine: number;
}

async function measured(run: () => Promise<number>): Promise<Run> {
  const from = process.cpuUsage();
  const eventsPerSecond = await run();
  const cpu = process.cpuUsage(from);
  return { eventsPerSecond, cpuMicrosPerLine: (cpu.user + cpu.system) / (EVENTS * READERS) };
}

/** The bare writers' event source: `PER_TICK` prebuilt lines a tick, as the compat run appends them. */
async function produce(onTick: (lines: string[]) => void): Promise<void> {
  for (let i = 0; i < EVENTS; i += PER_TICK) {
    const lines = Array.from(
      { length: Math.min(PER_TICK, EVENTS - i) },
      (_, k) => `${JSON.stringify({ type: 'message.appended', data: delta(i + k).data, meta: { id: `evt_${i + k}`, at: new Date().toISOString() }, streamIndex: i + k })}\n`,
    );
    onTick(lines);
    await new Promise(setImmediate);
  }
}

/** A bare node:http NDJSON writer: no journal, no envelope; `corked` writes each tick's lines joined, once per reader. */
async function bareNodeHttp(corked: boolean): Promise<number> {
  const responses: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('\n');
    responses.push(res);
  });
  const url = await listen(server);
  const { done } = await readersOf(url, 'ndjson');
  const started = performance.now();
  await produce((lines) => {
    if (corked) {
      const joined = lines.join('');
      for (const res of responses) res.write(joined);
    } else for (const line of lines) for (const res of responses) res.write(line);
  });
  await done;
  const seconds = (performance.now() - started) / 1000;
  server.closeAllConnections();
  server.close();
  return EVENTS / seconds;
}

/** A bare ws writer: one frame per event; `corked` holds each socket's frames of a tick for one write. */
async function bareWebSocket(corked: boolean): Promise<number> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => 'eve.v1' });
  const clients: { ws: WebSocket; socket: Duplex }[] = [];
  const server = createServer();
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => wss.handleUpgrade(request, socket, head, (ws) => clients.push({ ws, socket })));
  const url = await listen(server);
  const { done } = await readersOf(url.replace('http', 'ws'), 'websocket');
  const started = performance.now();
  await produce((lines) => {
    for (const { ws, socket } of clients) {
      if (corked) socket.cork();
      for (const line of lines) ws.send(line.slice(0, -1));
      if (corked) process.nextTick(() => socket.uncork());
    }
  });
  await done;
  const seconds = (performance.now() - started) / 1000;
  wss.close();
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
  const { done } =
    transport === 'ndjson'
      ? await readersOf(`${url}/eve/v1/session/${sessionId}/stream`, 'ndjson')
      : await readersOf(`${url.replace('http', 'ws')}/eve/v1/session/${sessionId}/ws`, 'websocket');
  const started = performance.now();
  for (let i = 0; i < EVENTS; i += PER_TICK) {
    await journal.append(sessionId, Array.from({ length: Math.min(PER_TICK, EVENTS - i) }, (_, k) => delta(i + k)));
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
  console.log(`one session, ${fmt(EVENTS)} events, ${READERS} readers, median of ${ROUNDS} rounds (Node ${process.version})`);
  type Writer = 'bare' | 'bareCorked' | 'bareWs' | 'bareWsCorked' | 'memory' | 'sqlite' | 'webSocket';
  const rounds: Record<Writer, Run>[] = [];
  const writers: Record<Writer, () => Promise<number>> = {
    bare: () => bareNodeHttp(false),
    bareCorked: () => bareNodeHttp(true),
    bareWs: () => bareWebSocket(false),
    bareWsCorked: () => bareWebSocket(true),
    memory: () => compat(new MemoryJournal()),
    sqlite: () => compat(new SqliteJournal(join(dir, `bench-${rounds.length}.db`))),
    webSocket: () => compat(new MemoryJournal(), 'websocket'),
  };
  for (let round = 0; round < ROUNDS; round++) {
    const runs = {} as Record<Writer, Run>;
    for (const name of Object.keys(writers) as Writer[]) runs[name] = await measured(writers[name]);
    rounds.push(runs);
  }
  const middle = (name: Writer): Run => ({
    eventsPerSecond: median(rounds.map((r) => r[name].eventsPerSecond)),
    cpuMicrosPerLine: median(rounds.map((r) => r[name].cpuMicrosPerLine)),
  });
  const [bare, bareCorked, bareWs, bareWsCorked] = [middle('bare'), middle('bareCorked'), middle('bareWs'), middle('bareWsCorked')];
  const [memory, sqlite, webSocket] = [middle('memory'), middle('sqlite'), middle('webSocket')];
  const of = (run: Run, base: Run, label: string) => `${(run.eventsPerSecond / base.eventsPerSecond).toFixed(2)} of ${label}`;
  const row = (label: string, run: Run, ratios = '') =>
    console.log(`${label.padEnd(31)} ${fmt(run.eventsPerSecond).padStart(9)} events/s, writer CPU ${run.cpuMicrosPerLine.toFixed(2)} µs/line${ratios && `  (${ratios})`}`);
  row('bare node:http writer', bare);
  row('bare node:http writer, corked', bareCorked);
  row('bare ws writer', bareWs);
  row('bare ws writer, corked', bareWsCorked);
  row('compat NDJSON, memory journal', memory, `${of(memory, bare, 'bare')}, ${of(memory, bareCorked, 'corked bare')}`);
  row('compat NDJSON, SQLite journal', sqlite, `${of(sqlite, bare, 'bare')}, ${of(sqlite, bareCorked, 'corked bare')}`);
  row('compat WebSocket, memory', webSocket, `${of(webSocket, bareWs, 'bare ws')}, ${of(webSocket, bareWsCorked, 'corked bare ws')}, ${of(webSocket, memory, 'NDJSON')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
