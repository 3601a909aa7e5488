import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client, type ClientSession } from 'eve/client';
import { defineFlueConnection } from '@eve-flue/connections';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn, readUntil } from './support/events.ts';
import { eventCount } from './support/parked.ts';
import { startSdkOAuthServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// The MCP SDK's own example server with its built-in OAuth provider: it lists nothing to anyone
// who has not signed in. Mounted twice, so that a plain turn meets two OAuth connections.
let sdk: ThirdPartyServer;
let bridge: DemoBridge;
let browser: Browser;
let client: Client;
const journals: unknown[][] = [];

type AnyEvent = { type: string; data: Record<string, unknown> };
const GREET = '/tool connection__notes__greet {"name":"Ada"}';

beforeAll(async () => {
  [sdk, browser] = await Promise.all([startSdkOAuthServer(), launchChromium()]);
  bridge = await startDemoBridge({
    connections: [
      defineFlueConnection({ name: 'notes', url: sdk.url, auth: { type: 'oauth2' } }),
      defineFlueConnection({ name: 'archive', url: sdk.url, auth: { type: 'oauth2' } }),
    ],
  });
  client = new Client({ host: bridge.url });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
  await sdk?.close();
  expect(flueNamesIn(journals)).toEqual([]);
});

/** Opens the sign-in link in Chromium: the SDK's provider approves at once and sends the browser back. */
async function signInInBrowser(url: string): Promise<string> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForURL(/\/eve\/v1\/oauth\/result\//);
    return (await page.textContent('#result')) ?? '';
  } finally {
    await context.close();
  }
}

async function sendAndSignIn(session: ClientSession | undefined, message: string) {
  const startIndex = session ? await eventCount(session) : 0;
  const sent = session ? { session, response: await session.send(message) } : await client.sessions.create({ message });
  const result = sent.response!.result();
  const seen = (await readUntil(sent.session.stream({ startIndex }), (e) => e.type === 'authorization.required')) as AnyEvent[];
  const required = seen.at(-1)!;
  const page = await signInInBrowser((required.data.authorization as { url: string }).url);
  const done = await result;
  journals.push(done.events as unknown[]);
  return { session: sent.session, required, page, result: done, events: done.events as unknown as AnyEvent[] };
}

test('a plain message never parks, with any number of OAuth connections', async () => {
  const { session, response } = await client.sessions.create({ message: 'hello' });
  const first = await response!.result();
  const second = await (await session.send('hello again')).result();
  journals.push(first.events as unknown[], second.events as unknown[]);
  for (const result of [first, second]) {
    expect(result.events.map((e) => e.type)).not.toContain('authorization.required');
    expect(result.status).toBe('waiting');
  }
  expect(second.message).toBe('Echo: hello again');
  const status = (await (await fetch(`${bridge.url}/eve/v1/connections`)).json()) as { connections: { name: string; state: string }[] };
  expect(status.connections.map((c) => c.state)).toEqual(['needs_sign_in', 'needs_sign_in']);
});

test('a tool of a hidden server: the stand-in signs in, and the same turn answers with the real tool', async () => {
  const { session, required, page, events, result } = await sendAndSignIn(undefined, GREET);
  expect(page).toContain('You are signed in');
  expect(required.data).toMatchObject({ name: 'notes', attemptId: expect.stringMatching(/^att_/) });
  const calls = events.filter((e) => e.type === 'actions.requested').flatMap((e) => (e.data.actions as { toolName: string }[]).map((a) => a.toolName));
  expect(calls).toEqual(['connection__notes', 'connection__notes__greet']);
  expect(result.message).toBe('Tool connection__notes__greet returned: Hello, Ada!');
  expect(new Set(events.map((e) => e.data.turnId).filter(Boolean)).size).toBe(1);
  const types = events.map((e) => e.type);
  expect(types.filter((t) => t === 'turn.completed')).toHaveLength(1);

  // The token is held: the next call needs no sign-in.
  const again = await (await session.send('/tool connection__notes__greet {"name":"Bo"}')).result();
  journals.push(again.events as unknown[]);
  expect(again.message).toBe('Tool connection__notes__greet returned: Hello, Bo!');
  expect(again.events.map((e) => e.type)).not.toContain('authorization.required');

  // Signed out, the next call asks again, and a new sign-in works.
  const sessionId = session.state.sessionId;
  const signOut = await fetch(`${bridge.url}/eve/v1/connections/notes/authorization?sessionId=${sessionId}`, { method: 'DELETE' });
  // The SDK's provider has no revocation endpoint: nothing was revoked, and the answer says so.
  expect(await signOut.json()).toEqual({ ok: true, status: 'signed_out', revoked: false });
  const renewed = await sendAndSignIn(session, '/tool connection__notes__greet {"name":"Cy"}');
  expect(renewed.result.message).toBe('Tool connection__notes__greet returned: Hello, Cy!');
});
