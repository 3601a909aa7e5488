import { afterAll, beforeAll, expect, test } from '@jest/globals';
import express from 'express';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, type CredentialContext } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { listen, type Listening } from './support/listen.ts';
import { startToolServers } from './support/tool-servers.ts';

// Status lines: a server that lists its tools only with a credential (`Bearer letmein`), the
// credential each caller's or the connection's own; a server that answers 503 with its reason.
const ROUTE = { alice: 'route-token-of-alice-0123456789', bob: 'route-token-of-bob-01234567890', carol: 'route-token-of-carol-012345678' };
const TOKENS: Record<string, string> = { alice: 'letmein', bob: 'not-the-key' };
let tools: Listening;
let failing: Listening;
let failures = 0;
let bridge: DemoBridge;

beforeAll(async () => {
  tools = await startToolServers();
  const app = express();
  app.all('/mcp', (_request, response) => {
    response.status(503).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: `down for maintenance (request ${++failures})` } });
  });
  failing = await listen(app);
  const token = ({ principal }: CredentialContext) => (principal ? (TOKENS[principal] ?? '') : '');
  bridge = await startDemoBridge({
    auth: bearerTokens({ [ROUTE.alice]: 'alice', [ROUTE.bob]: 'bob', [ROUTE.carol]: 'carol' }),
    connections: [
      defineFlueConnection({ name: 'locked', url: `${tools.url}/locked/mcp/echo`, auth: { type: 'bearer', token } }),
      defineFlueConnection({ name: 'fixed', url: `${tools.url}/locked/mcp/echo`, auth: { type: 'bearer', token: 'a-wrong-static-key' } }),
      defineFlueConnection({ name: 'failing', url: `${failing.url}/mcp` }),
    ],
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await tools?.close();
  await failing?.close();
});

const ask = async (who: keyof typeof ROUTE, message: string) =>
  (await (await new Client({ host: bridge.url, auth: { bearer: ROUTE[who] } }).sessions.create({ message })).response!.result()).message;
const statusOf = async (who: keyof typeof ROUTE, name = 'locked') =>
  ((await (await fetch(`${bridge.url}/eve/v1/connections`, { headers: { authorization: `Bearer ${ROUTE[who]}` } })).json()) as { connections: { name: string; state: string; tools: string[]; missing: string[] }[] }).connections.find(
    (c) => c.name === name,
  )!;

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

test('a refused static credential reads the same, precise line at startup and after a turn', async () => {
  const line = /^the server refused the connection’s credential \(HTTP 401\)/;
  expect((await statusOf('carol', 'fixed')).missing).toEqual([expect.stringMatching(line)]);
  expect(await ask('carol', '/tool connection__fixed__echo {"text":"x"}')).toBe('No tool named connection__fixed__echo is available.');
  expect((await statusOf('carol', 'fixed')).missing).toEqual([expect.stringMatching(line)]);
});

test('a failing server’s line keeps the HTTP status and its own message, at startup and after a turn', async () => {
  expect((await statusOf('carol', 'failing')).missing).toEqual([expect.stringMatching(/^the server is unavailable: HTTP 503: down for maintenance \(request \d+\)$/)]);
  const before = failures;
  expect(await ask('carol', 'hello')).toBe('Echo: hello');
  // The turn did not wait for it; the bridge tried it again meanwhile, and says what it answered.
  const after = `the server is unavailable: HTTP 503: down for maintenance (request ${before + 1})`;
  await until(async () => (await statusOf('carol', 'failing')).missing[0] === after);
});

/** Resolves once `condition` holds, failing after 10 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
