import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, test } from '@jest/globals';
import { SqliteJournal, type JournalLine } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';
import { GroupCommit, type GroupStore } from '../src/journal/group-commit.ts';
import { INDEX_BATCH_ROWS } from '../src/journal/sqlite-event-log.ts';

/** A store that logs what the scheduler does, and fails where told. */
function loggingStore(fail: { write?: string; commit?: boolean } = {}) {
  const log: string[] = [];
  const visible: string[] = [];
  const store: GroupStore<string, string> = {
    begin: () => log.push('begin'),
    commit: () => {
      if (fail.commit) throw new Error('disk full');
      log.push('commit');
    },
    rollback: () => log.push('rollback'),
    write: (write) => {
      if (write === fail.write) throw new Error(`cannot write ${write}`);
      log.push(`write ${write}`);
      return write.toUpperCase();
    },
    committed: (write) => visible.push(write),
  };
  return { log, visible, store };
}

describe('GroupCommit', () => {
  test('runs the writes of one tick in one transaction, in order, visible only after the commit', async () => {
    const { log, visible, store } = loggingStore();
    const group = new GroupCommit(store);
    const results = Promise.all(['a', 'b', 'c'].map((w) => group.enqueue(w)));
    expect(log).toEqual([]);
    expect(await results).toEqual(['A', 'B', 'C']);
    expect(log).toEqual(['begin', 'write a', 'write b', 'write c', 'commit']);
    expect(visible).toEqual(['a', 'b', 'c']);
    await group.enqueue('d');
    expect(log.slice(5)).toEqual(['begin', 'write d', 'commit']);
  });

  test('a write that throws fails alone; the rest commit without it', async () => {
    const { log, visible, store } = loggingStore({ write: 'b' });
    const group = new GroupCommit(store);
    const [a, b, c] = ['a', 'b', 'c'].map((w) => group.enqueue(w));
    await expect(b).rejects.toThrow('cannot write b');
    expect(await Promise.all([a, c])).toEqual(['A', 'C']);
    expect(log).toEqual(['begin', 'write a', 'rollback', 'begin', 'write a', 'write c', 'commit']);
    expect(visible).toEqual(['a', 'c']);
  });

  test('a failed commit fails every write of the batch, and none becomes visible', async () => {
    const { visible, store } = loggingStore({ commit: true });
    const group = new GroupCommit(store);
    const writes = ['a', 'b'].map((w) => group.enqueue(w));
    for (const write of writes) await expect(write).rejects.toThrow('disk full');
    expect(visible).toEqual([]);
  });

  test('when the rollback after a failed write fails too, the whole batch fails', async () => {
    const { store } = loggingStore({ write: 'b' });
    store.rollback = () => {
      throw new Error('database closed');
    };
    const group = new GroupCommit(store);
    const [a, b] = ['a', 'b'].map((w) => group.enqueue(w));
    await expect(b).rejects.toThrow('cannot write b');
    await expect(a).rejects.toThrow('database closed');
  });

  test('flush commits what is queued right away', async () => {
    const { log, store } = loggingStore();
    const group = new GroupCommit(store);
    const a = group.enqueue('a');
    group.flush();
    expect(log).toEqual(['begin', 'write a', 'commit']);
    expect(await a).toBe('A');
  });
});

describe('the SQLite journal, group-committed', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const file = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eve-flue-group-'));
    dirs.push(dir);
    return join(dir, 'journal.db');
  };
  const delta = (text: string): EveEventDraft => ({ type: 'message.appended', data: { messageDelta: text, sequence: 0, stepIndex: 0, turnId: 'turn_0' } });
  const record = (id: string) => ({ id, createdAt: 1, status: 'open' as const, turnCount: 0 });

  test('a subscriber hears of an event only once another connection can read it', async () => {
    const path = await file();
    const journal = new SqliteJournal(path);
    const other = new DatabaseSync(path);
    const sessions = ['ses_a', 'ses_b', 'ses_c'];
    for (const id of sessions) await journal.createSession(record(id));
    const seenByOther: number[] = [];
    for (const id of sessions) {
      journal.subscribe(id, {
        appended(tail) {
          const row = other.prepare('SELECT COUNT(*) AS n FROM event_log WHERE session_id = ? AND idx <= ?').get(id, tail) as { n: number };
          seenByOther.push(row.n);
        },
      });
    }
    const appended = await Promise.all(sessions.flatMap((id) => [journal.append(id, [delta('x')]), journal.append(id, [delta('y'), delta('z')])]));
    expect(appended.map((events) => events.map((e) => e.streamIndex))).toEqual([[0], [1, 2], [0], [1, 2], [0], [1, 2]]);
    expect(seenByOther).toEqual([1, 3, 1, 3, 1, 3]);
    other.close();
    await journal.close();
  });

  test('closing commits appends still queued, and a reopened journal continues their indexes', async () => {
    const path = await file();
    const journal = new SqliteJournal(path);
    await journal.createSession(record('ses_a'));
    const appending = journal.append('ses_a', [delta('a'), delta('b')]);
    await journal.close();
    expect((await appending).map((e) => e.streamIndex)).toEqual([0, 1]);
    const reopened = new SqliteJournal(path);
    expect((await reopened.append('ses_a', [delta('c')]))[0]!.streamIndex).toBe(2);
    expect((await reopened.read('ses_a', 0, 10)).map((l) => JSON.parse(l.line).data.messageDelta)).toEqual(['a', 'b', 'c']);
    await reopened.close();
  });

  const texts = (lines: JournalLine[]) => lines.map((l) => (JSON.parse(l.line) as { data: { messageDelta: string } }).data.messageDelta);

  test.each([
    ['keyed by session', 'CREATE TABLE events (session_id TEXT NOT NULL, idx INTEGER NOT NULL, type TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (session_id, idx)) WITHOUT ROWID;'],
    [
      'in insertion order',
      'CREATE TABLE events (session_id TEXT NOT NULL, idx INTEGER NOT NULL, type TEXT NOT NULL, line TEXT NOT NULL); CREATE UNIQUE INDEX events_by_session ON events (session_id, idx);',
    ],
  ])('a file from before, with one events table %s, moves into the log and keeps working', async (_layout, schema) => {
    const path = await file();
    const old = new DatabaseSync(path);
    old.exec(schema);
    const insert = old.prepare('INSERT INTO events VALUES (?, ?, ?, ?)');
    for (const [sessionId, index, text] of [['ses_a', 0, 'a0'], ['ses_b', 0, 'b0'], ['ses_a', 1, 'a1']] as const) {
      insert.run(sessionId, index, 'message.appended', JSON.stringify({ type: 'message.appended', data: { messageDelta: text }, streamIndex: index }) + '\n');
    }
    old.close();
    const journal = new SqliteJournal(path);
    expect((await journal.append('ses_a', [delta('a2')]))[0]!.streamIndex).toBe(2);
    expect(texts(await journal.read('ses_a', 0, 10))).toEqual(['a0', 'a1', 'a2']);
    expect(texts(await journal.read('ses_b', 0, 10))).toEqual(['b0']);
    await journal.close();
    const reopened = new DatabaseSync(path);
    expect(reopened.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'events%'").all()).toEqual([]);
    reopened.close();
  });

  test('events past the last index batch are read from the log, kept across a reopen, and dropped with the rest', async () => {
    const path = await file();
    const many = (n: number) => Array.from({ length: n }, (_, i) => delta(String(i)));
    const long = 'x'.repeat(1_100_000);
    const journal = new SqliteJournal(path);
    await journal.append('ses_a', many(10));
    await journal.append('ses_b', many(INDEX_BATCH_ROWS)); // completes a batch: every row so far is indexed
    await journal.dropEvents('ses_b'); // the newest rows, all indexed: a row written next must still land past the index
    expect(await journal.read('ses_b', 0, 10)).toEqual([]);
    // A line longer than the recent-lines window empties it: these reads come from the store.
    await journal.append('ses_a', [delta('past the batch'), delta(long)]);
    expect(texts(await journal.read('ses_a', 8, 10))).toEqual(['8', '9', 'past the batch', long]);
    await journal.close();

    const reopened = new SqliteJournal(path);
    expect(await reopened.tail('ses_a')).toBe(11);
    expect(texts(await reopened.read('ses_a', 0, 20))).toEqual([...many(10).map((_, i) => String(i)), 'past the batch', long]);
    expect((await reopened.append('ses_a', [delta('after reopening')]))[0]!.streamIndex).toBe(12);
    await reopened.dropEvents('ses_a');
    expect(await reopened.read('ses_a', 0, 20)).toEqual([]);
    await reopened.close();
    const again = new SqliteJournal(path);
    expect(await again.read('ses_a', 0, 20)).toEqual([]);
    expect(await again.tail('ses_a')).toBe(-1);
    await again.close();
  });
});
