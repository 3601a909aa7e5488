import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, type ConnectionSetContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn } from './support/events.ts';
import type { Listening } from './support/listen.ts';
import { startToolServers } from './support/tool-servers.ts';
import { freePort } from './support/free-port.ts';
import { startHangingGate, type HangingGate } from './support/hanging-gate.ts';

// Per-caller connection sets: Alice's tenant and Bob's tenant each have an MCP server of their own.
const ROUTE = {
  alice: 'route-token-of-alice-0123456789',
  bob: 'route-token-of-bob-01234567890',
  carol: 'route-token-of-carol-012345678',
  dave: 'route-token-of-dave-0123456789',
  erin: 'route-token-of-erin-0123456789',
};
/** Long enough that a turn waiting for a hung server could never finish inside a test. */
const HOURS = 3_600_000;
let hungPort: number;
let hung: HangingGate | undefined;
let aliceServer: Listening;
let bobServer: Listening;
let bridge: DemoBridge;
const resolvedFor: ConnectionSetContext[] = [];
let carolAttempts = 0;
const journals: unknown[] = [];

beforeAll(async () => {
  [aliceServer, bobServer] = [await startToolServers(), await startToolServers()];
  hungPort = await freePort();
  bridge = await startDemoBridge({
    auth: bearerTokens(Object.fromEntries(Object.entries(ROUTE).map(([who, token]) => [token, who]))),
    connections: async (ctx) => {
      resolvedFor.push(ctx);
      switch (ctx.principal?.id) {
        case 'alice':
          return [defineFlueConnection({ name: 'workspace', url: `${aliceServer.url}/mcp/alice_notes` })];
        case 'bob':
          return [defineFlueConnection({ name: 'workspace', url: `${bobServer.url}/locked/mcp/bob_crm`, auth: { type: 'bearer', token: 'letmein' }, instanceKey: 'tenant-bob' })];
        case 'carol':
          // Its directory is down the first time: that turn fails, the next message works.
          if (++carolAttempts === 1) throw new Error('tenant directory unreachable (secret-detail-4711)');
          return [defineFlueConnection({ name: 'notes', url: `${aliceServer.url}/mcp/carol_notes` })];
        case 'erin':
          // Nothing listens there at first; later a server that accepts and never answers.
          return [defineFlueConnection({ name: 'stuck', url: `http://127.0.0.1:${hungPort}/mcp`, timeoutMs: HOURS })];
        default:
          return [defineFlueConnection({ name: 'Bad_Name', url: `${aliceServer.url}/mcp/x` })];
      }
    },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await aliceServer?.close();
  await bobServer?.close();
  await hung?.close();
  expect(flueNamesIn(journals)).toEqual([]);
});

const clientOf = (who: keyof typeof ROUTE) => new Client({ host: bridge.url, auth: { bearer: ROUTE[who] } });
async function ask(who: keyof typeof ROUTE, message: string) {
  const { session, response } = await clientOf(who).sessions.create({ message });
  const result = await response!.result();
  journals.push(result.events);
  return { session, result };
}
const statusOf = async (who: keyof typeof ROUTE) =>
  ((await (await fetch(`${bridge.url}/eve/v1/connections`, { headers: { authorization: `Bearer ${ROUTE[who]}` } })).json()) as { connections: { name: string; state: string; tools: string[] }[] }).connections;

test('two principals, two MCP servers: each sees and calls only their own', async () => {
  const alice = await ask('alice', '/tool connection__workspace__alice_notes {"text":"from alice"}');
  expect(alice.result.message).toBe('Tool connection__workspace__alice_notes returned: from alice');
  const bob = await ask('bob', '/tool connection__workspace__bob_crm {"text":"from bob"}');
  expect(bob.result.message).toBe('Tool connection__workspace__bob_crm returned: from bob');

  expect((await ask('alice', '/tool connection__workspace__bob_crm {"text":"x"}')).result.message).toBe('No tool named connection__workspace__bob_crm is available.');
  expect((await ask('bob', '/tool connection__workspace__alice_notes {"text":"x"}')).result.message).toBe('No tool named connection__workspace__alice_notes is available.');

  expect(await statusOf('alice')).toEqual([expect.objectContaining({ name: 'workspace', state: 'ready', tools: ['connection__workspace__alice_notes'] })]);
  expect(await statusOf('bob')).toEqual([expect.objectContaining({ name: 'workspace', state: 'ready', tools: ['connection__workspace__bob_crm'] })]);
  // Resolved with the caller's principal and session.
  expect(resolvedFor).toContainEqual({ principal: expect.objectContaining({ id: 'alice' }), sessionId: alice.session.state.sessionId });
});

test('a set is resolved once per session and principal', async () => {
  const { session } = await ask('alice', 'first');
  const before = resolvedFor.filter((c) => c.sessionId === session.state.sessionId).length;
  await (await session.send('second')).result();
  expect(resolvedFor.filter((c) => c.sessionId === session.state.sessionId).length).toBe(before);
});

test('a resolver that throws fails that turn; the next message tries again', async () => {
  const { session, result } = await ask('carol', '/tool connection__notes__carol_notes {"text":"one"}');
  const failed = result.events.find((e) => e.type === 'turn.failed') as { data: { code: string; message: string } } | undefined;
  expect(failed?.data).toMatchObject({ code: 'CONNECTIONS_UNAVAILABLE', message: 'the connection resolver failed' });
  expect(JSON.stringify(result.events)).not.toContain('secret-detail-4711');
  const again = await (await session.send('/tool connection__notes__carol_notes {"text":"two"}')).result();
  journals.push(again.events);
  expect(again.message).toBe('Tool connection__notes__carol_notes returned: two');
});

test('names follow Eve’s rule: a resolved `Bad_Name` fails the turn, naming the field', async () => {
  const { result } = await ask('dave', 'hello');
  const failed = result.events.find((e) => e.type === 'turn.failed') as { data: { code: string; message: string } } | undefined;
  expect(failed?.data.message).toMatch(/resolved connection "Bad_Name": `name` must be lowercase letters, digits or `-`/);
  const refused = await fetch(`${bridge.url}/eve/v1/connections`, { headers: { authorization: `Bearer ${ROUTE.dave}` } });
  expect(refused.status).toBe(503);
  expect(await refused.json()).toMatchObject({ ok: false, code: 'service_unavailable' });
});

test('a caller’s later session reuses their set’s registry: a server they found unreachable is not waited for', async () => {
  expect((await ask('erin', 'hello')).result.message).toBe('Echo: hello');
  expect((await statusOf('erin'))[0]).toMatchObject({ name: 'stuck', state: 'error', missing: [expect.stringMatching(/^the server is unavailable: .*ECONNREFUSED/)] });
  hung = await startHangingGate({ port: hungPort });
  // A new session: its first turn neither lists the set again nor waits for the hung server (its timeout is hours).
  expect((await ask('erin', 'hello again')).result.message).toBe('Echo: hello again');
  const deadline = Date.now() + 10_000;
  while (hung.unanswered() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(hung.unanswered()).toBeGreaterThan(0);
});
