/**
 * The load of bench/concurrent-turns.ts and bench/scale-out.ts: bridge processes run as children
 * that answer over IPC, and one NDJSON reader per session that checks every event arrives once,
 * in order. Each turn is `/sleep 5000`: the scripted model streams 200 deltas/s for 5 s.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

export const SLEEP_MS = 5_000;
const DELTAS_PER_TURN = 1_000; // 200 deltas/s for 5 s, four characters each
export const TEXT_PER_TURN = 'z'.repeat(DELTAS_PER_TURN * 4 - 1) + '.';

export interface Stats {
  cpuMicros: number;
  rss: number;
}

export function child(script: string, args: string[] = [], execArgv: string[] = [], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return fork(fileURLToPath(new URL(script, import.meta.url)), args, { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/**
 * A benchmark child's side of the IPC: `mark` starts a CPU measurement, `stats` answers the CPU
 * used since and the RSS, `memory` the RSS and heap after a full collection (with --expose-gc),
 * `stop` runs `stop`.
 */
export function answerStats(stop: () => Promise<void>): void {
  let cpuFrom = process.cpuUsage();
  process.on('message', async (message) => {
    if (message === 'mark') {
      cpuFrom = process.cpuUsage();
      process.send!({ marked: true });
    } else if (message === 'stats') {
      const cpu = process.cpuUsage(cpuFrom);
      process.send!({ cpuMicros: cpu.user + cpu.system, rss: process.memoryUsage().rss });
    } else if (message === 'memory') {
      // After a full collection: what stays, not what waits for the collector.
      (globalThis as { gc?: () => void }).gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      process.send!({ rss, heapUsed });
    } else if (message === 'stop') {
      await stop();
    }
  });
}

export async function ask<T>(process: ChildProcess, message: string): Promise<T> {
  process.send(message);
  const [answer] = (await once(process, 'message')) as [T];
  return answer;
}

export async function post(url: string, body?: unknown): Promise<{ sessionId: string }> {
  const response = await fetch(url, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { sessionId: string };
}

/** One session's reader: every event in order, each delta's delivery delay, the turn's end. */
export class Reader {
  deltas = 0;
  text = '';
  lost = 0;
  duplicated = 0;
  readonly delays: number[] = [];
  postedAt = 0;
  finishedAt: number | undefined;
  #next = 0;
  #buffered = '';
  readonly finished: Promise<void>;
  #finish!: () => void;
  #close!: () => void;

  readonly url: string;

  constructor(url: string) {
    this.url = url;
    this.finished = new Promise((resolve) => (this.#finish = resolve));
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(this.url, { agent: false }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => this.#take(chunk));
        resolve();
      });
      this.#close = () => req.destroy();
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.#close();
  }

  #take(chunk: string): void {
    const now = Date.now();
    const lines = (this.#buffered + chunk).split('\n');
    this.#buffered = lines.pop()!;
    for (const line of lines) {
      if (line === '') continue;
      const event = JSON.parse(line) as { type: string; streamIndex: number; meta: { at: string }; data: { messageDelta?: string } };
      if (event.streamIndex < this.#next) this.duplicated += 1;
      else if (event.streamIndex > this.#next) this.lost += event.streamIndex - this.#next;
      this.#next = Math.max(this.#next, event.streamIndex + 1);
      if (event.type === 'message.appended') {
        this.deltas += 1;
        this.text += event.data.messageDelta;
        this.delays.push(now - Date.parse(event.meta.at));
      }
      if (event.type === 'turn.completed' || event.type === 'turn.failed') {
        this.finishedAt = performance.now();
        this.#finish();
      }
    }
  }
}

