import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { defineOpenAPIConnection } from '@eve-flue/bridge';
import { DEMO_MCP_SCOPE, startDemoAuthorizationServer, type DemoAuthorizationServer } from '../apps/demo/src/authorization-server.ts';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn, readUntil } from './support/events.ts';
import { freePort } from './support/free-port.ts';
import { recordingLogger } from './support/logs.ts';
import { startPetApi, type PetApi } from './support/pet-api.ts';
import { answerSignIn } from './support/sign-in.ts';

// A fastify API that is an OAuth resource server (RFC 9728) of a real authorization server
// (oidc-provider): the first call meets a 401, the person signs in in a browser, the call goes on.
let authorizationServer: DemoAuthorizationServer;
let pets: PetApi;
let bridge: DemoBridge;
let browser: Browser;
const logger = recordingLogger();

type AnyEvent = { type: string; data: Record<string, unknown> };

beforeAll(async () => {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/`;
  [authorizationServer, browser] = await Promise.all([startDemoAuthorizationServer({ resource }), launchChromium()]);
  pets = await startPetApi({ port, oauth: { issuer: authorizationServer.issuer, jwksUri: String(authorizationServer.metadata.jwks_uri), resource, scope: DEMO_MCP_SCOPE } });
  bridge = await startDemoBridge({ connections: [defineOpenAPIConnection({ name: 'secure', spec: `${pets.origin}/openapi.json`, auth: { type: 'oauth2', scopes: [DEMO_MCP_SCOPE] } })] }, logger);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
  await pets?.close();
  await authorizationServer?.close();
});

test('a 401 from the API parks the call on a sign-in; signed in, the same call reaches the API with the token', async () => {
  expect(bridge.connections.status().find((s) => s.name === 'secure')).toMatchObject({ state: 'ready', tools: expect.arrayContaining(['connection__secure__getPet']) });
  const client = new Client({ host: bridge.url });
  const { session, response } = await client.sessions.create({ message: '/tool connection__secure__getPet {"petId":"p1"}' });
  const result = response!.result();
  const seen = (await readUntil(session.stream(), (e) => e.type === 'authorization.required')) as unknown as AnyEvent[];
  const required = seen.at(-1)!;
  const page = await answerSignIn(browser, (required.data.authorization as { url: string }).url, 'Approve');
  expect(page.text).toMatch(/signed in|connected|authorized/i);
  const done = await result;
  const events = done.events as unknown as AnyEvent[];
  expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['authorization.required', 'authorization.completed', 'action.result', 'turn.completed']));
  const action = events.find((e) => e.type === 'action.result')!.data as { status: string; result: { output: unknown } };
  expect(action).toMatchObject({ status: 'completed', result: { output: { status: 200, body: { id: 'p1', name: 'Rex' } } } });
  const calls = pets.seen.filter((s) => s.url === '/pets/p1');
  expect(calls.map((s) => (s.headers.authorization === undefined ? 'none' : 'bearer'))).toEqual(['none', 'bearer']);
  const token = /^Bearer (.+)$/.exec(String(calls[1]!.headers.authorization))![1]!;
  expect(JSON.stringify(events) + logger.text()).not.toContain(token);
  expect(flueNamesIn(events)).toEqual([]);
  // The session's next call carries the token at once.
  const again = await (await session.send('/tool connection__secure__getPet {"petId":"p1"}')).result();
  expect(again.message).toContain('"status":200');
}, 60_000);
