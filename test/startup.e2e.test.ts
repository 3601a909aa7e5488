import { afterAll, expect, test } from '@jest/globals';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'eve/client';
import { resolveMode, silentLogger } from '@eve-flue/compat-server';
import { defineFlueConnection } from '@eve-flue/connections';
import { createScriptedModel } from '@eve-flue/flue-adapter';
import { startBridge } from '@eve-flue/bridge';
import { Demo } from '../apps/demo/src/agent.ts';
import { freePort } from './support/free-port.ts';
import { listen } from './support/listen.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Asks until something listens on the port (the bridge listens before it is assembled). */
async function firstAnswer(url: string, init?: RequestInit): Promise<Response> {
  for (;;) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED') throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

test('while a slow connection holds up startup, every request gets 503 in Eve’s shape; then the bridge serves; its data folder is private', async () => {
  // An MCP server that accepts and never answers: listing its tools at startup waits for the timeout.
  const slow = await listen(() => undefined);
  cleanups.push(() => slow.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'eve-flue-startup-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const model = createScriptedModel();
  const starting = startBridge(
    {
      agent: Demo,
      providers: [model.provider],
      modelId: model.model,
      port,
      dataDir,
      connections: [defineFlueConnection({ name: 'slow', url: `${slow.url}/mcp`, timeoutMs: 3_000 })],
    },
    { logger: silentLogger },
  );
  const base = `http://127.0.0.1:${port}`;
  const unavailable = { ok: false, code: 'service_unavailable', error: 'The bridge is starting.' };
  const health = await firstAnswer(`${base}/eve/v1/health`);
  expect(health.status).toBe(503);
  expect(await health.json()).toEqual(unavailable);
  const create = await fetch(`${base}/eve/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"early"}' });
  expect(create.status).toBe(503);
  expect(await create.json()).toEqual(unavailable);

  const bridge = await starting;
  cleanups.push(() => bridge.close());
  const { response } = await new Client({ host: bridge.url }).sessions.create({ message: 'ready now' });
  expect((await response!.result()).message).toBe('Echo: ready now');

  // Conversations and sealed tokens are this user's alone.
  expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
  const files = await readdir(dataDir);
  expect(files).toEqual(expect.arrayContaining(['journal.db', 'connections.db', 'flue.db', 'token.key']));
  for (const file of files) expect([file, (await stat(join(dataDir, file))).mode & 0o777]).toEqual([file, 0o600]);
});

test('NODE_ENV=production counts in any case, and a config cannot downgrade it', () => {
  for (const value of ['production', 'Production', ' PRODUCTION ']) {
    expect(resolveMode(undefined, value)).toBe('production');
    expect(resolveMode('development', value)).toBe('production');
  }
  expect(resolveMode(undefined, 'development')).toBe('development');
  expect(resolveMode('production', undefined)).toBe('production');
});

test('a development config under NODE_ENV=Production still refuses to start without route auth', async () => {
  await expect(startBridge({ agent: Demo, mode: 'development', port: 0, store: 'memory' }, { logger: silentLogger, env: { NODE_ENV: 'Production' } })).rejects.toThrow(
    /production mode without route auth/,
  );
});
