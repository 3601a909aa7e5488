import { describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import { silentLogger } from '@eve-flue/compat-server';
import { startBridge } from '@eve-flue/bridge';
import { Client } from 'eve/client';
import { Demo } from '../../demo/src/agent.ts';
import { createScriptedModel } from '@eve-flue/flue-adapter';
import { CONFIG_KEYS, resolveSettings, VARIABLES } from '../src/settings.ts';

const config = { agent: Demo };

describe('resolveSettings', () => {
  test('the config wins over the environment, the environment over the default', () => {
    expect(resolveSettings(config, {}).port).toBe(3000);
    expect(resolveSettings(config, { PORT: '4100' }).port).toBe(4100);
    expect(resolveSettings({ ...config, port: 4200 }, { PORT: '4100' }).port).toBe(4200);
    expect(resolveSettings(config, {}).shutdownGraceMs).toBe(10_000);
    expect(resolveSettings(config, { SHUTDOWN_GRACE_MS: '2500' }).shutdownGraceMs).toBe(2500);
    expect(resolveSettings({ ...config, shutdownGraceMs: 45_000 }, { SHUTDOWN_GRACE_MS: '2500' }).shutdownGraceMs).toBe(45_000);
    expect(resolveSettings(config, { DATA_DIR: '/var/lib/bridge' }).dataDir).toBe('/var/lib/bridge');
    expect(resolveSettings(config, { CORS_ORIGINS: 'https://a.example, https://b.example' }).cors).toEqual({ origin: ['https://a.example', 'https://b.example'] });
  });

  test('an empty variable counts as unset', () => {
    expect(resolveSettings(config, { PORT: '', METRICS_PORT: ' ' })).toMatchObject({ port: 3000, metricsPort: undefined });
  });

  test.each([
    [{ SHUTDOWN_GRACE_MS: 'soon' }, '[eve-flue] SHUTDOWN_GRACE_MS: "soon" is not a number of milliseconds'],
    [{ METRICS_PORT: 'abc' }, '[eve-flue] METRICS_PORT: "abc" is not a port number'],
    [{ PORT: '70000' }, '[eve-flue] PORT: "70000" is not a port number'],
    [{ PORT: '3000.5' }, '[eve-flue] PORT: "3000.5" is not a port number'],
    [{ HOST: 'not a host' }, '[eve-flue] HOST: "not a host" is not a host name or IP address'],
    [{ PUBLIC_URL: 'agent.example.com' }, '[eve-flue] PUBLIC_URL: "agent.example.com" is not an absolute URL'],
    [{ LOG_LEVEL: 'loud' }, '[eve-flue] LOG_LEVEL: "loud" is not fatal, error, warn, info, debug, trace, silent'],
    [{ CORS_ORIGINS: 'https://ok.example,app.example.com' }, 'CORS_ORIGINS: "https://ok.example,app.example.com" is not a comma-separated list of origins'],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => resolveSettings(config, env)).toThrow(message);
  });

  test('a bad token key is refused without repeating it', () => {
    const short = randomBytes(16).toString('base64');
    let message = '';
    try {
      resolveSettings(config, { BRIDGE_TOKEN_KEY: short });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('[eve-flue] BRIDGE_TOKEN_KEY is not 32 bytes, base64 (openssl rand -base64 32)');
    expect(resolveSettings(config, { BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64') }).tokenKey).toBeDefined();
  });

  test.each([
    [{ ...config, shutdownGraceMs: -1 }, 'bridge config: `shutdownGraceMs` must be a number of milliseconds'],
    [{ ...config, metricsPort: 'abc' }, 'bridge config: `metricsPort` must be a port number'],
    [{ ...config, host: '' }, 'bridge config: `host` must be a host name or IP address'],
    [{ ...config, tokenKey: 'short' }, 'bridge config: `tokenKey` must be 32 bytes, base64'],
  ])('refuses a bad config value, naming the field (%j)', (bad, message) => {
    expect(() => resolveSettings(bad as never, {})).toThrow(message);
  });

  test('the host is normalized once: as listen() takes it and as a URL names it', () => {
    expect(resolveSettings(config, { HOST: '::1' }).host).toEqual({ address: '::1', inUrl: '[::1]', loopback: true });
    expect(resolveSettings(config, { HOST: '[::1]' }).host).toEqual({ address: '::1', inUrl: '[::1]', loopback: true });
    expect(resolveSettings(config, {}).host).toEqual({ address: '127.0.0.1', inUrl: '127.0.0.1', loopback: true });
    expect(resolveSettings(config, { HOST: '0.0.0.0' }).host).toEqual({ address: '0.0.0.0', inUrl: '0.0.0.0', loopback: false });
    expect(resolveSettings(config, { HOST: '::' }).host).toEqual({ address: '::', inUrl: '[::]', loopback: false });
  });

  test('NODE_ENV=production (any case) wins over a development config', () => {
    expect(resolveSettings({ ...config, mode: 'development' }, { NODE_ENV: ' Production ' }).mode).toBe('production');
    expect(resolveSettings(config, { NODE_ENV: 'test' }).mode).toBe('development');
  });

  test('the table names every config key and every variable once', () => {
    expect([...CONFIG_KEYS]).toEqual(expect.arrayContaining(['agent', 'port', 'host', 'publicUrl', 'shutdownGraceMs', 'metricsPort']));
    const names = VARIABLES.map((variable) => variable.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['PORT', 'HOST', 'PUBLIC_URL', 'DATA_DIR', 'LOG_LEVEL', 'BRIDGE_TOKEN_KEY', 'CORS_ORIGINS', 'NODE_ENV', 'METRICS_PORT', 'SHUTDOWN_GRACE_MS']));
  });
});

test('HOST=::1: the bridge listens on the IPv6 loopback and an Eve client talks to it there', async () => {
  const model = createScriptedModel();
  await using bridge = await startBridge(
    { agent: Demo, providers: [model.provider], modelId: model.model, store: 'memory', webPage: false },
    { logger: silentLogger, env: { HOST: '::1', PORT: '0' } },
  );
  expect(bridge.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
  expect(bridge.publicUrl).toBe(bridge.url);
  const address = bridge.server.address();
  expect(typeof address === 'object' && address?.address).toBe('::1');
  const { response } = await new Client({ host: bridge.url }).sessions.create({ message: 'over IPv6' });
  expect((await response!.result()).message).toBe('Echo: over IPv6');
  // Bound to loopback, the other loopback names on the port are the site too; another name is not.
  const port = new URL(bridge.url).port;
  expect(await statusWithHost(bridge.url, `localhost:${port}`)).toBe(200);
  expect(await statusWithHost(bridge.url, `[::1]:${port}`)).toBe(200);
  expect(await statusWithHost(bridge.url, 'evil.example')).toBe(421);
});

/** `GET /eve/v1/health` with the given `Host` header (fetch cannot set one). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(`${url}/eve/v1/health`, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}
