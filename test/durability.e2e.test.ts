import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startChildBridge, type ChildBridge } from './support/child-bridge.ts';
import { collect, readUntil, typesOf } from './support/events.ts';

let dataDir: string;
const running: ChildBridge[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-durability-'));
});

afterAll(async () => {
  await Promise.all(running.map((b) => b.kill()));
  await rm(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ChildBridge> {
  const bridge = await startChildBridge(dataDir);
  running.push(bridge);
  return bridge;
}

const rawStream = async (url: string, sessionId: string): Promise<string> =>
  (await fetch(`${url}/eve/v1/session/${sessionId}/stream?follow=false`)).text();

test('a killed bridge replays every stream byte for byte and ends the interrupted turn', async () => {
  const first = await start();
  const client = new Client({ host: first.url });
  const { session: done, response } = await client.sessions.create({ message: 'before the crash' });
  await response!.result();
  const { session: busy, response: running } = await client.sessions.create({ message: '/sleep 60000' });
  await readUntil(running!, (e) => e.type === 'message.appended');
  const before = await rawStream(first.url, done.state.sessionId);
  await first.kill();

  const second = await start();
  expect(await rawStream(second.url, done.state.sessionId)).toBe(before);

  const after = new Client({ host: second.url });
  const events = await collect(after.sessions.attach(busy.state.sessionId).stream({ startIndex: 0, follow: false }));
  expect(typesOf(events).slice(-2)).toEqual(['turn.failed', 'session.waiting']);
  expect(events.at(-2)?.data).toMatchObject({ code: 'interrupted', terminal: false, turnId: 'turn_0' });
  expect(new Set(events.map((e) => e.meta!.id)).size).toBe(events.length);

  const resumed = after.sessions.attach(busy.state.sessionId, { streamIndex: events.length });
  const next = await (await resumed.send('after the crash')).result();
  expect(next.message).toBe('Echo: after the crash');
  expect(next.events.find((e) => e.type === 'turn.started')?.data).toMatchObject({ turnId: 'turn_1' });
});
