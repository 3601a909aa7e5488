import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { bearerTokens } from '@eve-flue/compat-server';
import { launchChromium } from './support/browser.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { connectMcp, invocation, pollUntil } from './support/mcp-client.ts';
import { answerSignIn } from './support/sign-in.ts';

// An MCP host's invocation meets a connection that needs a sign-in: the host shows the URL, the
// person approves in a real browser at the demo's authorization server, and the same invocation
// goes on by itself to its answer.
const TOKEN = 'mcp-sign-in-route-token-0123';
let bridge: DemoBridge;
let browser: Browser;

beforeAll(async () => {
  [bridge, browser] = await Promise.all([startDemoBridge({ auth: bearerTokens({ [TOKEN]: 'ann' }), mcp: {} }), launchChromium()]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.close();
});

test('authorization_required with the sign-in URL; approved in Chromium; then completed with the tool result', async () => {
  const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
  const { invocationId } = await invocation(client, 'agent_start', { message: '/tool connection__demo__whoami {}' });
  const waiting = await pollUntil(client, invocationId, ['authorization_required', 'completed', 'failed']);
  expect(waiting).toEqual({
    invocationId,
    createdAt: expect.any(String),
    status: 'authorization_required',
    pollAfterMs: 1000,
    authorizations: [
      {
        name: 'demo',
        description: 'Authorization required for demo',
        authorization: { displayName: 'Demo', url: expect.stringMatching(/\/eve\/v1\/oauth\/start\/att_/), expiresAt: expect.any(String) },
        webhookUrl: `${bridge.publicUrl}/eve/v1/oauth/callback`,
      },
    ],
  });
  const page = await answerSignIn(browser, waiting.authorizations![0]!.authorization!.url!, 'Approve');
  expect(page.text).toContain('You are signed in');
  const done = await pollUntil(client, invocationId, ['completed', 'failed', 'cancelled']);
  expect(done).toEqual({ invocationId, createdAt: waiting.createdAt, status: 'completed', result: 'Tool connection__demo__whoami returned: demo-user' });
  await client.close();
});
