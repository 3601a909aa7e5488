import { expect, test } from '@jest/globals';
import { ConnectionRegistry, ConnectionSets, defineFlueConnection, UNHELD_SETS, type ConnectionSetContext } from '@eve-flue/connections';

/** Sets whose resolver and registries are counted; every caller gets the same one server. */
function countedSets() {
  const resolved: ConnectionSetContext[] = [];
  const built: ConnectionRegistry[] = [];
  const sets = new ConnectionSets(
    (ctx) => {
      resolved.push(ctx);
      return [defineFlueConnection({ name: 'notes', url: 'http://127.0.0.1:9/mcp' })];
    },
    async (definitions) => {
      const registry = new ConnectionRegistry(definitions, () => fetch);
      built.push(registry);
      return registry;
    },
  );
  return { sets, resolved, built };
}
const principal = (id: string) => ({ id, type: 'user' as const });

test('a caller with no session keeps their set while among the most recent; past the cap the oldest is resolved again', async () => {
  const { sets, resolved, built } = countedSets();
  const first = await sets.for({ principal: principal('p0') });
  expect(await sets.for({ principal: principal('p0') })).toBe(first);
  for (let i = 1; i <= UNHELD_SETS; i++) await sets.for({ principal: principal(`p${i}`) });
  expect(resolved).toHaveLength(UNHELD_SETS + 1);
  // p0 was the least recently used: its set and registry went, so it is resolved and listed anew.
  const again = await sets.for({ principal: principal('p0') });
  expect(again).not.toBe(first);
  expect(resolved).toHaveLength(UNHELD_SETS + 2);
  expect(built).toHaveLength(UNHELD_SETS + 2);
});

test('a registry lives while a set uses it: shared by a session and the same caller with no session, gone with both', async () => {
  const { sets, built } = countedSets();
  const inSession = await sets.hold({ sessionId: 's1', principal: principal('ann') });
  expect(await sets.for({ principal: principal('ann') })).toBe(inSession);
  for (let i = 0; i < UNHELD_SETS; i++) await sets.for({ principal: principal(`other${i}`) });
  // Ann's call with no session was pushed out, but her session still uses the registry.
  expect(await sets.for({ principal: principal('ann') })).toBe(inSession);
  sets.forget('s1');
  for (let i = 0; i < UNHELD_SETS; i++) await sets.for({ principal: principal(`later${i}`) });
  const count = built.length;
  expect(await sets.hold({ sessionId: 's2', principal: principal('ann') })).not.toBe(inSession);
  expect(built).toHaveLength(count + 1);
});

test("a session's turns hold its set until it is forgotten (ended, or out of memory): then its next turn resolves it again", async () => {
  const { sets, resolved } = countedSets();
  const held = await sets.hold({ sessionId: 's1', principal: principal('ann') });
  // Asked for by the session's id (GET /connections?sessionId=): the set its turns run with, whatever else is asked.
  expect(await sets.for({ sessionId: 's1', principal: principal('ann') })).toBe(held);
  for (let i = 0; i < UNHELD_SETS * 2; i++) await sets.for({ principal: principal(`other${i}`) });
  expect(await sets.hold({ sessionId: 's1', principal: principal('ann') })).toBe(held);
  const count = resolved.length;
  sets.forget('s1');
  expect(await sets.hold({ sessionId: 's1', principal: principal('ann') })).not.toBe(held);
  expect(resolved).toHaveLength(count + 1);
});

test('sets asked for sessions no turn holds (any id a caller names) are capped like those with no session', async () => {
  const { sets, resolved } = countedSets();
  const first = await sets.for({ sessionId: 'made-up-0' });
  for (let i = 1; i <= UNHELD_SETS; i++) await sets.for({ sessionId: `made-up-${i}` });
  expect(resolved).toHaveLength(UNHELD_SETS + 1);
  expect(await sets.for({ sessionId: 'made-up-0' })).not.toBe(first);
  expect(resolved).toHaveLength(UNHELD_SETS + 2);
  // A turn of a session asked for before takes the set over: the cap no longer pushes it out.
  const taken = await sets.hold({ sessionId: 'made-up-0' });
  for (let i = 1; i <= UNHELD_SETS; i++) await sets.for({ sessionId: `later-${i}` });
  expect(await sets.for({ sessionId: 'made-up-0' })).toBe(taken);
});

test('a resolver that throws is not remembered', async () => {
  let calls = 0;
  const sets = new ConnectionSets(
    () => {
      if (++calls === 1) throw new Error('directory down');
      return [];
    },
    async (definitions) => new ConnectionRegistry(definitions, () => fetch),
  );
  await expect(sets.for({ principal: principal('ann') })).rejects.toThrow('the connection resolver failed');
  await expect(sets.for({ principal: principal('ann') })).resolves.toBeInstanceOf(ConnectionRegistry);
  expect(calls).toBe(2);
});
