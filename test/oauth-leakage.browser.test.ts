import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection } from '@eve-flue/connections';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';
import { parkOnSignIn } from './support/parked.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';

const ROUTE_TOKEN = 'route-token-for-alice-0123456789';
const CLIENT_COOKIE = 'sid=client-cookie-secret-42';
const logger = recordingLogger();
const responses: string[] = [];
let bridge: DemoBridge;
let browser: Browser;
let proxy: RecordingProxy;

beforeAll(async () => {
  browser = await launchChromium();
  bridge = await startDemoBridge(async (demo) => {
    // Every MCP request goes through a proxy that records what it carries.
    const upstream = new URL(demo.mcpUrl);
    proxy = await startRecordingProxy(upstream.origin);
    return {
      auth: bearerTokens({ [ROUTE_TOKEN]: 'alice' }),
      connections: [
        defineFlueConnection({ name: 'demo', url: `${proxy.url}${upstream.pathname}`, displayName: 'Demo', auth: { type: 'oauth2', scopes: ['mcp:tools'], resource: demo.mcpUrl } }),
      ],
    };
  }, logger);
  // Everything the bridge sends on any HTTP response, browser pages included.
  bridge.server.prependListener('request', (_request, response) => {
    const write = response.write.bind(response) as (...args: unknown[]) => boolean;
    const end = response.end.bind(response) as (...args: unknown[]) => typeof response;
    const keep = (chunk: unknown) => {
      if (chunk !== undefined && typeof chunk !== 'function') responses.push(Buffer.from(chunk as string).toString('utf8'));
    };
    response.write = ((chunk: unknown, ...rest: unknown[]) => (keep(chunk), write(chunk, ...rest))) as typeof response.write;
    response.end = ((chunk?: unknown, ...rest: unknown[]) => (keep(chunk), end(chunk, ...rest))) as typeof response.end;
  });
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
  await proxy?.close();
});

test('no token, code, secret or verifier reaches an event, a log line or an HTTP response; caller credentials never reach the MCP server', async () => {
  const client = new Client({ host: bridge.url, auth: { bearer: ROUTE_TOKEN }, headers: { cookie: CLIENT_COOKIE } });
  const parked = await parkOnSignIn(client);
  const flow = (await bridge.authStore.getFlow(parked.attemptId))!;
  if (flow.backend.kind !== 'oauth2') throw new Error('the demo connection signs in with OAuth');
  const started = flow.backend;
  const context = await browser.newContext();
  const page = await context.newPage();
  let code = '';
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname === '/eve/v1/oauth/callback') code = url.searchParams.get('code') ?? '';
  });
  await page.goto(parked.startUrl);
  await Promise.all([page.waitForURL(/\/oauth\/result\/connected/), page.getByRole('button', { name: 'Approve' }).click()]);
  const binding = (await context.cookies()).find((c) => c.name.startsWith('eve_oauth_'));
  await context.close();
  expect((await parked.result).message).toBe('Tool connection__demo__whoami returned: demo-user');
  // A second call uses the held token.
  await (await parked.session.send('/tool connection__demo__whoami {}')).result();

  const tokens = (await bridge.authStore.getToken('principal:alice', 'demo'))!;
  const client_ = await bridge.authStore.getClient(`${started.issuer} ${bridge.broker.redirectUri}`);
  const secrets = {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken!,
    code,
    verifier: started.verifier,
    stateSecret: new URL(flow.authorizationUrl).searchParams.get('state')!.split('.')[1]!,
    clientSecret: client_!.clientSecret!,
    ...(binding ? { bindingCookie: binding.value } : {}),
  };
  for (const [name, value] of Object.entries(secrets)) expect([name, value.length > 10]).toEqual([name, true]);

  const journal = await (await fetch(`${bridge.url}/eve/v1/session/${parked.session.state.sessionId}/stream?follow=false`, {
    headers: { authorization: `Bearer ${ROUTE_TOKEN}` },
  })).text();
  const places = { journal, logs: logger.text(), responses: responses.join('\n') };
  for (const [place, text] of Object.entries(places)) {
    for (const [name, value] of Object.entries(secrets)) {
      // Headers are not captured: the binding cookie is set once in the start link's Set-Cookie,
      // and the state rides the Location header to the provider, as OAuth requires.
      expect([place, name, text.includes(value)]).toEqual([place, name, false]);
    }
  }

  const upstream = proxy.requests;
  expect(upstream.length).toBeGreaterThan(0);
  const carried = JSON.stringify(upstream.map((r) => r.headers));
  expect(carried).not.toContain(ROUTE_TOKEN);
  expect(carried).not.toContain('client-cookie-secret');
  const whoami = upstream.filter((r) => r.body.includes('"whoami"'));
  expect(whoami.map((r) => r.headers.authorization)).toContain(`Bearer ${tokens.accessToken}`);
});
