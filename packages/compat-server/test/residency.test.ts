import { describe, expect, test } from '@jest/globals';
import { SessionResidency, type EvictionReason } from '../src/session/residency.ts';

/** A residency on a clock the test moves, recording each eviction as it happens. */
function residency(idleMs: number, maxResident: number) {
  let now = 1_000;
  const evictions: { sessionId: string; reason: EvictionReason }[] = [];
  let pending: string | undefined;
  const waiters: (() => void)[] = [];
  const tracker = new SessionResidency({
    idleMs,
    maxResident,
    now: () => now,
    evict: async (sessionId) => {
      pending = sessionId;
    },
    onEvicted: (reason) => {
      evictions.push({ sessionId: pending!, reason });
      waiters.splice(0).forEach((resolve) => resolve());
    },
    onError: (error) => {
      throw error;
    },
  });
  return {
    tracker,
    evictions,
    advance: (ms: number) => void (now += ms),
    nextEviction: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

describe('SessionResidency', () => {
  test('past the cap, the least recently used idle session leaves; working and followed ones stay', async () => {
    const { tracker, evictions } = residency(60_000, 2);
    tracker.working('a', true);
    tracker.working('a', false);
    tracker.followed('b');
    tracker.working('c', true);
    tracker.working('c', false); // three resident: `a` is the least recently used idle one
    await tracker.close();
    expect(evictions).toEqual([{ sessionId: 'a', reason: 'capacity' }]);
    tracker.working('d', true); // three again: `b` is followed, `c` idle, `d` at work
    tracker.working('d', false);
    await tracker.close();
    expect(evictions.map((e) => e.sessionId)).toEqual(['a', 'c']);
    expect(tracker.size).toBe(2);
  });

  test('an idle session leaves once idleMs has passed since its last use, not while it is followed', async () => {
    const { tracker, evictions, advance, nextEviction } = residency(40, 100);
    tracker.working('a', true);
    tracker.working('a', false);
    tracker.followed('b');
    advance(41);
    await nextEviction();
    expect(evictions).toEqual([{ sessionId: 'a', reason: 'idle' }]);
    tracker.unfollowed('b'); // used now: its idle time starts again
    advance(39);
    expect(tracker.size).toBe(1);
    advance(2);
    await nextEviction();
    expect(evictions.map((e) => e.sessionId)).toEqual(['a', 'b']);
    await tracker.close();
  });
});
