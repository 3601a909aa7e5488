import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { defineFlueConnectionWithConnect } from '@eve-flue/connections';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';
import { parkOnSignIn } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

// Vercel Connect is configured by a Vercel OIDC token; this machine has none.
delete process.env.VERCEL_OIDC_TOKEN;
const logger = recordingLogger();
let bridge: DemoBridge;
let browser: Browser;

beforeAll(async () => {
  // The demo servers, but the connection asks for Vercel Connect first.
  bridge = await startDemoBridge(
    ({ mcpUrl }) => ({
      connections: [
        defineFlueConnectionWithConnect({ name: 'demo', url: mcpUrl, connector: 'demo/eve-flue', auth: { type: 'oauth2', scopes: ['mcp:tools'] } }),
      ],
    }),
    logger,
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
});

test('without Vercel Connect the bridge says why once, and signs in with the connection’s own OAuth settings', async () => {
  const warnings = logger.entries.filter((e) => e.message.startsWith('Vercel Connect is not configured'));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]!.fields).toMatchObject({ connection: 'demo', fallback: 'oauth2' });
  const parked = await parkOnSignIn(new Client({ host: bridge.url }));
  await answerSignIn(browser, parked.startUrl, 'Approve');
  expect((await parked.result).message).toBe('Tool connection__demo__whoami returned: demo-user');
});
