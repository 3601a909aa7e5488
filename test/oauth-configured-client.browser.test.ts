import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { silentLogger } from '@eve-flue/compat-server';
import { defineFlueConnection } from '@eve-flue/connections';
import { startBridge, type RunningBridge } from '@eve-flue/bridge';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { launchChromium } from './support/browser.ts';
import { freePort } from './support/free-port.ts';
import { parkOnSignIn } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

const CLIENT_ID = 'eve-flue-registered';
const CLIENT_SECRET = 'registered-client-secret-0123456789';
let demo: DemoStack;
let bridge: RunningBridge;
let browser: Browser;

beforeAll(async () => {
  // A client registered up front needs its exact redirect URI, so the bridge's port is chosen first.
  const port = await freePort();
  demo = await startDemoStack(
    {},
    {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: [`http://127.0.0.1:${port}/eve/v1/oauth/callback`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
    },
  );
  const issuer = demo.authorizationServer.issuer;
  const registered = { type: 'oauth2' as const, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['mcp:tools'], resource: demo.mcpUrl };
  bridge = await startBridge(
    {
      ...demo.config,
      port,
      store: 'memory',
      mode: 'development',
      connections: [
        // Discovery from the issuer (RFC 8414).
        defineFlueConnection({ name: 'byissuer', url: demo.mcpUrl, auth: { ...registered, issuer } }),
        // Explicit endpoints, as for GitHub.
        defineFlueConnection({
          name: 'explicit',
          url: demo.mcpUrl,
          auth: { ...registered, authorizationUrl: `${issuer}/auth`, tokenUrl: `${issuer}/token` },
        }),
      ],
    },
    { logger: silentLogger },
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
  await demo?.close();
});

test.each(['byissuer', 'explicit'])('a registered client signs in through %s endpoints', async (connection) => {
  const parked = await parkOnSignIn(new Client({ host: bridge.url }), `/tool connection__${connection}__whoami {}`);
  const page = await answerSignIn(browser, parked.startUrl, 'Approve');
  expect(page.finalUrl).toMatch(/\/oauth\/result\/connected$/);
  expect((await parked.result).message).toBe(`Tool connection__${connection}__whoami returned: demo-user`);
  const tokens = await bridge.authStore.getToken(`session:${parked.session.state.sessionId}`, connection);
  expect(tokens?.clientId).toBe(CLIENT_ID);
});
