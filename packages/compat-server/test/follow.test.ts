import { expect, test } from '@jest/globals';
import { JournalFollower, MemoryJournal, StoreUnavailableError, type FollowRange, type Journal, type JournalLine, type TailListener } from '@eve-flue/compat-server';
import type { EveEventDraft } from '@eve-flue/eve-protocol';

const delta = (text: string): EveEventDraft => ({ type: 'message.appended', data: { messageDelta: text, sequence: 0, stepIndex: 0, turnId: 'turn_0' } });

async function sessionWith(journal: Journal, events: number): Promise<string> {
  const id = `ses_${Math.random().toString(36).slice(2)}`;
  await journal.createSession({ id, createdAt: Date.now(), status: 'open', turnCount: 0 });
  if (events > 0) await journal.append(id, Array.from({ length: events }, (_, i) => delta(`e${i}`)));
  return id;
}

/** A reader that records every index it is sent; `room` says whether it takes more after each page. */
function reader(journal: Journal, sessionId: string, range: FollowRange, room: (pages: number) => boolean = () => true) {
  const indexes: number[] = [];
  const pageSizes: number[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let ended: ((error: unknown) => void) | undefined;
  const end = new Promise<unknown>((resolve) => (ended = resolve));
  const follower = new JournalFollower(journal, sessionId, range, {
    write(page: readonly JournalLine[]) {
      indexes.push(...page.map((line) => line.index));
      pageSizes.push(page.length);
      for (const waiter of waiters.filter((w) => indexes.length >= w.count)) waiter.resolve();
      return room(pageSizes.length);
    },
    end: (error) => ended!(error),
  });
  const received = (count: number) =>
    new Promise<void>((resolve) => {
      if (indexes.length >= count) resolve();
      else waiters.push({ count, resolve });
    });
  return { follower, indexes, pageSizes, received, end };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('replays from the cursor in pages of at most 256, then sends live appends in order', async () => {
  const journal = new MemoryJournal();
  const id = await sessionWith(journal, 600);
  const { follower, indexes, pageSizes, received } = reader(journal, id, { from: 10 });
  await received(590);
  expect(pageSizes.every((size) => size <= 256)).toBe(true);
  await journal.append(id, [delta('live 1')]);
  await journal.append(id, [delta('live 2'), delta('live 3')]);
  await received(593);
  expect(indexes).toEqual(range(10, 602));
  follower.close();
});

test('a bounded follow ends at `until` and sends nothing past it', async () => {
  const journal = new MemoryJournal();
  const id = await sessionWith(journal, 20);
  const { indexes, end } = reader(journal, id, { from: 5, until: 12 });
  expect(await end).toBeUndefined();
  expect(indexes).toEqual(range(5, 12));
});

test('a full reader is sent nothing until it resumes, and then everything it missed', async () => {
  const journal = new MemoryJournal();
  const id = await sessionWith(journal, 300);
  let full = true;
  const { follower, indexes, received } = reader(journal, id, { from: 0 }, () => !full);
  await received(256);
  await journal.append(id, [delta('while full')]);
  // Let any read the notification started finish: a full reader must not be written to.
  await new Promise(setImmediate);
  expect(indexes).toHaveLength(256);
  full = false;
  follower.resume();
  await received(301);
  expect(indexes).toEqual(range(0, 300));
  follower.close();
});

test('after close the reader hears nothing more, and its listener is gone', async () => {
  const journal = new MemoryJournal();
  const id = await sessionWith(journal, 3);
  const { follower, indexes, received } = reader(journal, id, { from: 0 });
  await received(3);
  follower.close();
  await journal.append(id, [delta('after close')]);
  await new Promise(setImmediate);
  expect(indexes).toEqual([0, 1, 2]);
});

/** A journal whose reads come back short, as a cache of recent lines does when another instance appended. */
class ShortReadJournal extends MemoryJournal {
  override async read(sessionId: string, from: number, limit: number): Promise<JournalLine[]> {
    return super.read(sessionId, from, Math.min(limit, 4));
  }
}

test('a short page is not taken for the tail: the follower reads on until a read comes back empty', async () => {
  const journal = new ShortReadJournal();
  const id = await sessionWith(journal, 10);
  const { indexes, end } = reader(journal, id, { from: 0, until: 9 });
  expect(await end).toBeUndefined();
  expect(indexes).toEqual(range(0, 9));
});

/** A journal whose notifications go missing, the way pub/sub loses them: it says so, and how often to look. */
class ForgetfulJournal extends MemoryJournal {
  readonly pollIntervalMs = 10;
  listeners: TailListener[] = [];
  override subscribe(_sessionId: string, listener: TailListener): void {
    this.listeners.push(listener);
  }

  override unsubscribe(): void {}
}

test('when notifications can be lost, a caught-up follower looks for appends on its own', async () => {
  const journal = new ForgetfulJournal();
  const id = await sessionWith(journal, 2);
  const { follower, indexes, received } = reader(journal, id, { from: 0 });
  await received(2);
  await journal.append(id, [delta('unannounced')]);
  await received(3);
  expect(indexes).toEqual([0, 1, 2]);
  follower.close();
});

test('when the store loses its notifications, the follow ends with StoreUnavailableError', async () => {
  const journal = new ForgetfulJournal();
  const id = await sessionWith(journal, 1);
  const { received, end } = reader(journal, id, { from: 0 });
  await received(1);
  for (const listener of journal.listeners) listener.lost?.();
  expect(await end).toBeInstanceOf(StoreUnavailableError);
});
