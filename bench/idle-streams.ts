/**
 * Resident memory of one bridge process holding 10,000 idle open streams (NDJSON, then
 * WebSocket), measured in that process. Run: node bench/idle-streams.ts [streams]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { fmt, openWebSocketReaders } from './lib.ts';

const STREAMS = Number(process.argv[2] ?? 10_000);
const script = fileURLToPath(new URL('./serve-idle.ts', import.meta.url));
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

async function ask<T>(child: ChildProcess, message: string): Promise<T> {
  child.send(message);
  const [answer] = (await once(child, 'message')) as [T];
  return answer;
}

async function run(transport: 'ndjson' | 'websocket'): Promise<void> {
  const child = fork(script, { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [{ url, sessions }] = (await once(child, 'message')) as [{ url: string; sessions: string[] }];
  const before = (await ask<{ rss: number }>(child, 'rss')).rss;
  const open: { destroy(): void }[] = [];
  for (let i = 0; i < STREAMS; i += 500) {
    const batch = Array.from({ length: Math.min(500, STREAMS - i) }, (_, k) => sessions[(i + k) % sessions.length]!);
    if (transport === 'ndjson') {
      open.push(
        ...(await Promise.all(
          batch.map(
            (sessionId) =>
              new Promise<{ destroy(): void }>((resolve, reject) => {
                const req = request(`${url}/eve/v1/session/${sessionId}/stream`, { agent }, (res) => resolve(res));
                req.on('error', reject);
                req.end();
              }),
          ),
        )),
      );
    } else {
      for (const sessionId of batch) open.push(...(await openWebSocketReaders(`${url.replace('http', 'ws')}/eve/v1/session/${sessionId}/ws`, 1)).map((s) => ({ destroy: () => s.terminate() })));
    }
  }
  const after = (await ask<{ rss: number }>(child, 'rss')).rss;
  console.log(
    `${transport.padEnd(9)} ${fmt(STREAMS)} idle streams: RSS ${fmt(before / 2 ** 20)} MiB → ${fmt(after / 2 ** 20)} MiB ` +
      `(+${fmt((after - before) / 2 ** 20)} MiB, ${((after - before) / STREAMS / 1024).toFixed(1)} KiB a stream)`,
  );
  for (const stream of open) stream.destroy();
  child.kill();
  await once(child, 'exit');
}

console.log(`one bridge process (Node ${process.version}), streams spread over 100 sessions`);
await run('ndjson');
await run('websocket');
