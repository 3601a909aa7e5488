/**
 * A React app on another origin, built on Eve's own `useEveAgent` hook (`eve/react`), chats with a
 * bridge configured with nothing but CORS_ORIGINS: replies, connection tool calls and a sign-in.
 * The same app served from an origin the bridge does not list gets no reply.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { build } from 'esbuild';
import express from 'express';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/browser.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { listen, type Listening } from './support/listen.ts';
import { answerSignIn } from './support/sign-in.ts';

let allowed: Listening;
let foreign: Listening;
let bridge: CliBridge;
let browser: Browser;

/** The app in one script, as its own bundler would ship it. */
async function bundleApp(): Promise<string> {
  const { outputFiles } = await build({
    entryPoints: [fileURLToPath(new URL('./support/eve-react-app/app.jsx', import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  return outputFiles[0]!.text;
}

/** An app origin of its own serving the bundled chat. */
function serveApp(script: string): Promise<Listening> {
  const app = express();
  app.get('/', (_request, response) => void response.type('html').send('<!doctype html><title>chat</title><div id="root"></div><script type="module" src="/app.js"></script>'));
  app.get('/app.js', (_request, response) => void response.type('js').send(script));
  app.get('/favicon.ico', (_request, response) => void response.status(204).end());
  return listen(app);
}

beforeAll(async () => {
  const script = await bundleApp();
  [allowed, foreign, browser] = await Promise.all([serveApp(script), serveApp(script), launchChromium()]);
  bridge = await startCliBridge({ CORS_ORIGINS: allowed.url });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  await Promise.all([allowed?.close(), foreign?.close()]);
});

/** The chat page, and the errors its console prints (a CORS refusal is one). */
async function chatAt(origin: Listening): Promise<{ page: Page; consoleErrors: string[] }> {
  const page = await (await browser.newContext()).newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.goto(`${origin.url}/?host=${encodeURIComponent(bridge.url)}`);
  await page.locator('#status[data-status="ready"]').waitFor();
  return { page, consoleErrors };
}

async function send(page: Page, message: string): Promise<void> {
  await page.fill('#message', message);
  await page.click('#send');
}

const reply = (page: Page, text: string) => page.locator('article[data-role="assistant"] [data-part="text"]', { hasText: text });

test('from an origin CORS_ORIGINS lists, the hook shows replies, tool results and a sign-in that resumes its turn', async () => {
  const { page, consoleErrors } = await chatAt(allowed);
  await send(page, 'hello');
  await reply(page, 'Echo: hello').waitFor();
  await page.locator('#status[data-status="ready"]').waitFor();

  await send(page, '/tool connection__demo__echo {"text":"hi"}');
  await reply(page, 'Tool connection__demo__echo returned: hi').waitFor();
  await page.locator('#status[data-status="ready"]').waitFor();

  await send(page, '/tool connection__demo__whoami {}');
  const link = page.locator('a[data-sign-in="demo"]');
  await link.waitFor();
  const signIn = await answerSignIn(browser, (await link.getAttribute('href'))!, 'Approve');
  expect(signIn.finalUrl).toMatch(/\/oauth\/result\/connected/);
  await page.locator('[data-authorization-outcome="authorized"]').waitFor();
  await reply(page, 'Tool connection__demo__whoami returned: demo-user').waitFor();
  await page.locator('#status[data-status="ready"]').waitFor();
  await expect(page.locator('#error').count()).resolves.toBe(0);
  expect(consoleErrors).toEqual([]);
});

test('from an origin it does not list, the browser blocks the request and the hook shows an error, no reply', async () => {
  const { page, consoleErrors } = await chatAt(foreign);
  const blocked: string[] = [];
  page.on('requestfailed', (request) => {
    if (request.url().startsWith(bridge.url)) blocked.push(request.failure()?.errorText ?? '');
  });
  await send(page, 'hello');
  await page.locator('#status[data-status="error"]').waitFor();
  await expect(page.locator('#error').textContent()).resolves.toMatch(/fetch/i);
  expect(blocked).toContain('net::ERR_FAILED');
  expect(consoleErrors.join('\n')).toMatch(/blocked by CORS policy/);
  await expect(page.locator('article[data-role="assistant"]').count()).resolves.toBe(0);
});
