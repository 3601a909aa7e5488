/**
 * Memory of one process holding 10,000 idle open streams, per transport (NDJSON, then
 * WebSocket): the compat server against a bare server holding the same connections (a node:http
 * chunked response after one line; a `ws` connection), each in a process of its own, measured
 * in that process. Resident memory moves with V8's own sizing of its heap: its young generation
 * grows with the allocation rate while the streams open, and a full GC keeps it; a
 * memory-reducing GC (what V8 runs under memory pressure) hands it back. Both are printed, with
 * the heap in use per stream (what the streams retain); each figure is the median of three runs.
 * Run: node bench/idle-streams.ts [streams] [runs]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { fmt, median, openWebSocketReaders } from './lib.ts';

const STREAMS = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.argv[3] ?? 3);
const script = fileURLToPath(new URL('./serve-idle.ts', import.meta.url));
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

type Server = 'compat' | 'bare';
type Transport = 'ndjson' | 'websocket';
interface Memory {
  /** After a full GC. */
  rss: number;
  /** After a memory-reducing GC. */
  reducedRss: number;
  heap: number;
}

async function memoryOf(child: ChildProcess): Promise<Memory> {
  child.send('memory');
  const [answer] = (await once(child, 'message')) as [Memory];
  return answer;
}

function openNdjson(url: string): Promise<{ destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Bytes per stream, from before the first stream to after the last. */
async function perStream(server: Server, transport: Transport): Promise<Memory> {
  const child = fork(script, [server], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [{ url, sessions }] = (await once(child, 'message')) as [{ url: string; sessions: string[] }];
  const before = await memoryOf(child);
  const open: { destroy(): void }[] = [];
  for (let i = 0; i < STREAMS; i += 500) {
    const batch = Array.from({ length: Math.min(500, STREAMS - i) }, (_, k) => sessions[(i + k) % sessions.length]!);
    if (transport === 'ndjson') open.push(...(await Promise.all(batch.map((sessionId) => openNdjson(`${url}/eve/v1/session/${sessionId}/stream`)))));
    else {
      for (const sessionId of batch) {
        const [socket] = await openWebSocketReaders(`${url.replace('http', 'ws')}/eve/v1/session/${sessionId}/ws`, 1);
        open.push({ destroy: () => socket!.terminate() });
      }
    }
  }
  const after = await memoryOf(child);
  for (const stream of open) stream.destroy();
  child.kill();
  await once(child, 'exit');
  return {
    rss: (after.rss - before.rss) / STREAMS,
    reducedRss: (after.reducedRss - before.reducedRss) / STREAMS,
    heap: (after.heap - before.heap) / STREAMS,
  };
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

console.log(`${fmt(STREAMS)} idle streams over 100 sessions, one process per run, median of ${RUNS} runs (Node ${process.version})`);
for (const transport of ['ndjson', 'websocket'] as const) {
  const figures = {} as Record<Server, Memory>;
  for (const server of ['bare', 'compat'] as const) {
    const runs: Memory[] = [];
    for (let run = 0; run < RUNS; run++) runs.push(await perStream(server, transport));
    figures[server] = { rss: median(runs.map((r) => r.rss)), reducedRss: median(runs.map((r) => r.reducedRss)), heap: median(runs.map((r) => r.heap)) };
    const { rss, reducedRss, heap } = figures[server];
    console.log(
      `${transport.padEnd(9)} ${server.padEnd(6)} RSS ${kib(rss).padStart(9)} a stream (+${fmt((rss * STREAMS) / 2 ** 20)} MiB), ` +
        `after a memory-reducing GC ${kib(reducedRss)}, heap ${kib(heap)}`,
    );
  }
  const { bare, compat } = figures;
  const ratio = (key: keyof Memory) => `${(compat[key] / bare[key]).toFixed(2)}×`;
  console.log(`${transport.padEnd(9)} compat / bare: RSS ${ratio('rss')}, after a memory-reducing GC ${ratio('reducedRss')}, heap ${ratio('heap')}`);
}
