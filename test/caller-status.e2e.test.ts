import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, type CredentialContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import type { Listening } from './support/listen.ts';
import { startToolServers } from './support/tool-servers.ts';

// A server that lists its tools only with a credential (`Bearer letmein`); the credential is each caller's.
const ROUTE = { alice: 'route-token-of-alice-0123456789', bob: 'route-token-of-bob-01234567890', carol: 'route-token-of-carol-012345678' };
const TOKENS: Record<string, string> = { alice: 'letmein', bob: 'not-the-key' };
let tools: Listening;
let bridge: DemoBridge;

beforeAll(async () => {
  tools = await startToolServers();
  const token = ({ principal }: CredentialContext) => (principal ? (TOKENS[principal] ?? '') : '');
  bridge = await startDemoBridge({
    auth: bearerTokens({ [ROUTE.alice]: 'alice', [ROUTE.bob]: 'bob', [ROUTE.carol]: 'carol' }),
    connections: [defineFlueConnection({ name: 'locked', url: `${tools.url}/locked/mcp/echo`, auth: { type: 'bearer', token } })],
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await tools?.close();
});

const ask = async (who: keyof typeof ROUTE, message: string) =>
  (await (await new Client({ host: bridge.url, auth: { bearer: ROUTE[who] } }).sessions.create({ message })).response!.result()).message;
const statusOf = async (who: keyof typeof ROUTE) =>
  ((await (await fetch(`${bridge.url}/eve/v1/connections`, { headers: { authorization: `Bearer ${ROUTE[who]}` } })).json()) as { connections: { name: string; state: string; tools: string[]; missing: string[] }[] }).connections[0]!;

test('at startup, with no caller, nothing was sent: the status does not say "refused"', async () => {
  const status = await statusOf('carol');
  expect(status.state).toBe('error');
  expect(status.missing).toEqual([expect.stringMatching(/only with a caller’s credential/)]);
  expect(status.missing.join(' ')).not.toMatch(/refused/);
});

test('each caller’s credential status is their own: Alice’s works while Bob’s 401 shows for Bob only', async () => {
  expect(await ask('alice', '/tool connection__locked__echo {"text":"alice here"}')).toBe('Tool connection__locked__echo returned: alice here');
  expect(await statusOf('alice')).toMatchObject({ state: 'ready', tools: ['connection__locked__echo'], missing: [] });

  expect(await ask('bob', '/tool connection__locked__echo {"text":"bob here"}')).toBe('No tool named connection__locked__echo is available.');
  expect(await statusOf('bob')).toMatchObject({ state: 'error', missing: [expect.stringMatching(/^the server refused this caller’s credential \(HTTP 401\)/)] });

  // Bob's refusal changed nothing for Alice, nor for a caller who has not used it yet.
  expect(await statusOf('alice')).toMatchObject({ state: 'ready', missing: [] });
  expect((await statusOf('carol')).missing).toEqual([expect.stringMatching(/only with a caller’s credential/)]);
  expect(await ask('alice', '/tool connection__locked__echo {"text":"still works"}')).toBe('Tool connection__locked__echo returned: still works');
});
