import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { nanoid } from 'nanoid';
import { MemoryJournal, RedisConnections, RedisJournal, RedisSessionCluster, SqliteJournal, type Journal, type SessionRecord } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `eve-test:${nanoid(8)}:`;
const cleanups: (() => Promise<void>)[] = [];

/** One instance's Redis connections, closed after the file. */
function connections(url = REDIS_URL, options?: ConstructorParameters<typeof RedisConnections>[1]): RedisConnections {
  const opened = new RedisConnections(url, options);
  cleanups.push(() => opened.close());
  return opened;
}

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const stores: [string, () => Promise<Journal>][] = [
  ['memory', async () => new MemoryJournal()],
  [
    'SQLite',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'eve-flue-journal-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return new SqliteJournal(join(dir, 'journal.db'));
    },
  ],
  [
    'Redis',
    async () => {
      const journal = new RedisJournal(connections(), { prefix });
      await journal.ready();
      return journal;
    },
  ],
];

const record = (id: string, extra: Pick<SessionRecord, 'activeTurn'> = {}): SessionRecord => ({ id, createdAt: 1, status: 'open', turnCount: 0, ...extra });
const delta = (text: string): EveEventDraft => ({ type: 'message.appended', data: { messageDelta: text, sequence: 0, stepIndex: 0, turnId: 'turn_0' } });

describe.each(stores)('the %s journal', (_name, open) => {
  test('assigns consecutive indexes, stamps delivery ids, and reads back exactly what it wrote', async () => {
    const journal = await open();
    const id = `ses_${nanoid()}`;
    await journal.createSession(record(id));
    expect(await journal.tail(id)).toBe(-1);
    const first = await journal.append(id, [delta('a'), delta('b')], { deliveryIds: ['dlv_1'] });
    const second = await journal.append(id, [delta('c')]);
    expect([...first, ...second].map((e) => e.streamIndex)).toEqual([0, 1, 2]);
    expect(first[0]!.meta.deliveryIds).toEqual(['dlv_1']);
    expect(second[0]!.meta.deliveryIds).toBeUndefined();
    expect(await journal.tail(id)).toBe(2);
    const lines = await journal.read(id, 1, 10);
    expect(lines.map((l) => l.index)).toEqual([1, 2]);
    expect(lines.map((l) => l.type)).toEqual(['message.appended', 'message.appended']);
    expect(JSON.parse(lines[0]!.line)).toEqual(JSON.parse(JSON.stringify(first[1])));
    expect(await journal.read(id, 3, 10)).toEqual([]);
    await journal.close();
  });

  test('appends from two writers never share an index', async () => {
    const journal = await open();
    const id = `ses_${nanoid()}`;
    await journal.createSession(record(id));
    await Promise.all(Array.from({ length: 20 }, (_, i) => journal.append(id, [delta(String(i))])));
    const lines = await journal.read(id, 0, 100);
    expect(lines.map((l) => l.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(new Set(lines.map((l) => JSON.parse(l.line).meta.id)).size).toBe(20);
    await journal.close();
  });

  test('notifies subscribers of the new tail, and stops when unsubscribed', async () => {
    const journal = await open();
    const id = `ses_${nanoid()}`;
    await journal.createSession(record(id));
    const seen: number[] = [];
    let notified!: () => void;
    const twice = new Promise<void>((resolve) => (notified = resolve));
    const listener = {
      appended(tail: number) {
        seen.push(tail);
        if (seen.length === 2) notified();
      },
    };
    journal.subscribe(id, listener);
    // Redis subscriptions are asynchronous: keep appending until both notifications arrive.
    const appending = (async () => {
      for (let i = 0; seen.length < 2 && i < 200; i++) {
        await journal.append(id, [delta('x')]);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await twice;
    await appending;
    journal.unsubscribe(id, listener);
    expect(seen[1]! > seen[0]!).toBe(true);
    // Unsubscribed: a listener subscribed now hears the next appends; the first one hears none of them.
    const heard = seen.length;
    let witnessed!: () => void;
    const witness = { appended: () => witnessed() };
    const heardByWitness = new Promise<void>((resolve) => (witnessed = resolve));
    journal.subscribe(id, witness);
    let appendsHeard = false;
    void heardByWitness.then(() => (appendsHeard = true));
    for (let i = 0; !appendsHeard && i < 200; i++) {
      await journal.append(id, [delta('unheard')]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await heardByWitness;
    expect(seen).toHaveLength(heard);
    journal.unsubscribe(id, witness);
    await journal.close();
  });

  test('records: create-once by operation key, interrupted turns, ended sessions, dropped events', async () => {
    const journal = await open();
    const id = `ses_${nanoid()}`;
    const other = `ses_${nanoid()}`;
    const op = `principal\u0000${nanoid()}`;
    expect((await journal.createSession(record(id), op)).id).toBe(id);
    expect((await journal.createSession(record(other), op)).id).toBe(id);
    await journal.append(id, [delta('x')], { record: record(id, { activeTurn: { turnId: 'turn_0', sequence: 0, deliveryIds: ['dlv_1'] } }) });
    expect((await journal.listInterrupted()).map((r) => r.id)).toContain(id);
    await journal.append(id, [{ type: 'session.completed', data: undefined }], { record: { ...record(id), status: 'ended', endedAt: 10 } });
    expect((await journal.listInterrupted()).map((r) => r.id)).not.toContain(id);
    expect(await journal.listEndedBefore(11)).toContain(id);
    // An ended session no longer owns its operation key.
    expect((await journal.createSession(record(other), op)).id).toBe(other);
    await journal.dropEvents(id);
    expect(await journal.listEndedBefore(11)).not.toContain(id);
    expect(await journal.read(id, 0, 10)).toEqual([]);
    expect((await journal.getSession(id))?.eventsDropped).toBe(true);
    await journal.close();
  });
});

test('a Redis journal of a cluster member writes only to sessions nobody else holds', async () => {
  const [onOurs, onTheirs] = [connections(), connections()];
  const [ours, theirs] = [new RedisSessionCluster(onOurs, { prefix }), new RedisSessionCluster(onTheirs, { prefix })];
  // The fence is the cluster's own: journal and leases cannot disagree on where a lease lives.
  const journal = new RedisJournal(onOurs, { prefix, fence: ours.fence });
  await journal.ready();
  try {
    const id = `ses_${nanoid()}`;
    await journal.createSession(record(id));
    await journal.append(id, [delta('nobody holds it')]);
    await ours.claim(id);
    await journal.append(id, [delta('we hold it')]);
    await ours.release(id);
    expect((await theirs.claim(id)).owner).toBe(theirs.instanceId);
    await expect(journal.append(id, [delta('taken over')])).rejects.toMatchObject({ name: 'SessionTakenOverError' });
    expect(await journal.tail(id)).toBe(1);
  } finally {
    await Promise.all([ours.close(), theirs.close(), journal.close()]);
  }
});

test('a Redis journal appends on after Redis lost its scripts (a restart, SCRIPT FLUSH): the body is sent again', async () => {
  const journal = new RedisJournal(connections(), { prefix });
  await journal.ready();
  const id = `ses_${nanoid()}`;
  await journal.createSession(record(id));
  await journal.append(id, [delta('before')]);
  const redis = new Redis(REDIS_URL);
  // Other processes' scripts go too; they fall back the same way.
  await redis.script('FLUSH');
  redis.disconnect();
  await journal.append(id, [delta('after')]);
  expect((await journal.read(id, 0, 10)).map((l) => l.index)).toEqual([0, 1]);
  await journal.close();
});

test('a Redis journal that cannot reach Redis fails fast with StoreUnavailableError', async () => {
  const unreachable = connections('redis://127.0.0.1:1', { redis: { retryStrategy: () => null } });
  const journal = new RedisJournal(unreachable, { prefix });
  await expect(journal.ready()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  await expect(journal.getSession('ses_x')).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  await journal.close();
});

test('an instance counts as reachable only while every one of its Redis connections is up', async () => {
  const shared = connections();
  await shared.ready();
  await expect(shared.check()).resolves.toBeUndefined();
  shared.dedicated('transactions'); // connecting, like a connection still coming back after an outage
  await expect(shared.check()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  await shared.ready();
  await expect(shared.check()).resolves.toBeUndefined();
});

test("one instance's stores share a command connection and a subscription connection", async () => {
  const name = `eve-test-${nanoid(8)}`;
  const shared = connections(REDIS_URL, { name });
  const cluster = new RedisSessionCluster(shared, { prefix });
  const journal = new RedisJournal(shared, { prefix, fence: cluster.fence });
  await Promise.all([journal.ready(), cluster.ready()]);
  const id = `ses_${nanoid()}`;
  await journal.createSession(record(id));
  const heard = new Promise<number>((resolve) => journal.subscribe(id, { appended: resolve }));
  await journal.append(id, [delta('over the shared subscriber')]);
  expect(await heard).toBe(0);
  const ours = String(await shared.commands.client('LIST'))
    .split('\n')
    .filter((line) => line.includes(` name=${name}:`))
    .map((line) => /name=(\S+)/.exec(line)![1])
    .sort();
  expect(ours).toEqual([`${name}:channels`, `${name}:commands`]);
  await cluster.close();
});
