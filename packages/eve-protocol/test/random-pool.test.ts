import { expect, test } from '@jest/globals';
import { createEventId } from '@eve-flue/eve-protocol';
import { pooledRandom } from '../src/random-pool.ts';

test('draws floats in [0, 1) that cover every ULID character, across refills of the pool', () => {
  const random = pooledRandom(64);
  const characters = new Set<number>();
  const draws = Array.from({ length: 10_000 }, random);
  for (const x of draws) characters.add(Math.floor(x * 32));
  expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
  expect(Math.max(...draws)).toBeLessThan(1);
  expect([...characters].sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i));
  // Refilled pools are fresh bytes, not the first pool again.
  expect(draws.slice(64, 128)).not.toEqual(draws.slice(0, 64));
});

test('event ids from the pooled source are unique and sort in minting order', () => {
  const ids = Array.from({ length: 5_000 }, (_, i) => createEventId(1_700_000_000_000 + Math.floor(i / 10)));
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual(ids);
  expect(ids[0]).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
});
