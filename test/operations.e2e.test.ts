import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { WebSocket } from 'ws';
import { startDemoStack, type DemoStack } from '@eve-flue/demo';
import { launchChromium } from './support/browser.ts';
import { deleteKeys } from './support/redis-keys.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { readUntil } from './support/events.ts';
import { answerSignIn } from './support/sign-in.ts';

/** What an operator sees of a CLI bridge on Redis with route auth: its access log and its metrics. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `eve-ops-test:${randomUUID()}:`;
const CONFIG = fileURLToPath(new URL('./support/cluster.config.ts', import.meta.url));
const TOKEN = `tok_${randomBytes(16).toString('hex')}`;
const QUERY_SECRET = `qs_${randomBytes(16).toString('hex')}`;
const COOKIE_SECRET = `ck_${randomBytes(16).toString('hex')}`;

let demo: DemoStack;
let browser: Browser;
let bridge: CliBridge;
let metricsUrl: string;

beforeAll(async () => {
  [demo, browser] = await Promise.all([startDemoStack(), launchChromium()]);
  bridge = await startCliBridge(
    { REDIS_URL, REDIS_PREFIX: PREFIX, MCP_URL: demo.mcpUrl, BRIDGE_TOKEN_KEY: randomBytes(32).toString('base64'), ROUTE_TOKEN: TOKEN, METRICS_PORT: '0' },
    ['--config', CONFIG],
  );
  metricsUrl = String(bridge.logs.find((line) => typeof line.metrics === 'string')?.metrics);
}, 60_000);

afterAll(async () => {
  await bridge?.stop();
  await browser?.close();
  await demo?.close();
  await deleteKeys(REDIS_URL, PREFIX);
});

const authorized = { authorization: `Bearer ${TOKEN}` };
const accessLines = () => bridge.logs.filter((line) => line.msg === 'request').map((line) => line.access as Record<string, unknown>);

/** Waits until the access log has a line `matches` accepts (lines are written when a response closes). */
async function accessLine(matches: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const found = accessLines().find(matches);
    if (found) return found;
    await new Promise<void>((resolve) => bridge.child.stdout!.once('data', () => setImmediate(resolve)));
  }
}

describe('the access log', () => {
  test('has every refused request with its status, and no secret', async () => {
    const base = bridge.url;
    const created = await (await fetch(`${base}/eve/v1/session`, { method: 'POST', headers: { ...authorized, 'content-type': 'application/json' }, body: '{}' })).json() as { sessionId: string };
    const refusals: { status: number; send: () => Promise<Response> }[] = [
      { status: 401, send: () => fetch(`${base}/eve/v1/info?access_token=${QUERY_SECRET}`, { headers: { cookie: `session=${COOKIE_SECRET}` } }) },
      { status: 401, send: () => fetch(`${base}/eve/v1/session`, { method: 'POST', headers: { authorization: `Bearer ${QUERY_SECRET}` } }) },
      { status: 404, send: () => fetch(`${base}/eve/v1/session/ses_nope/stream?token=${QUERY_SECRET}`, { headers: authorized }) },
      {
        status: 409,
        send: () =>
          fetch(`${base}/eve/v1/session/${created.sessionId}`, {
            method: 'POST',
            headers: { ...authorized, 'content-type': 'application/json' },
            body: JSON.stringify({ inputResponses: [{ requestId: 'req_unknown', optionId: 'yes' }] }),
          }),
      },
      {
        status: 413,
        send: () =>
          fetch(`${base}/eve/v1/session`, {
            method: 'POST',
            headers: { ...authorized, 'content-type': 'application/json' },
            body: JSON.stringify({ message: 'x'.repeat(36 * 1024 * 1024) }),
          }),
      },
    ];
    for (const refusal of refusals) {
      const response = await refusal.send();
      expect(response.status).toBe(refusal.status);
      await response.arrayBuffer();
    }
    // A WebSocket stream refused before its upgrade, its token in the query.
    const socket = new WebSocket(`${base.replace('http', 'ws')}/eve/v1/session/${created.sessionId}/ws?token=${QUERY_SECRET}`, ['eve.v1']);
    socket.on('error', () => undefined); // ws reports the refused upgrade as an error too
    const [, refusedUpgrade] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number; resume(): void }];
    expect(refusedUpgrade.statusCode).toBe(401);
    refusedUpgrade.resume();
    expect(await accessLine((l) => l.transport === 'websocket' && l.status === 401)).toMatchObject({ route: '/eve/v1/session/:sessionId/ws', sessionId: created.sessionId });
    for (const status of [401, 404, 409, 413]) {
      const line = await accessLine((l) => l.status === status);
      expect(line).toMatchObject({ method: expect.any(String), route: expect.any(String), durationMs: expect.any(Number), bytes: expect.any(Number) });
    }
    expect(await accessLine((l) => l.status === 404)).toMatchObject({ method: 'GET', route: '/eve/v1/session/:sessionId/stream', sessionId: 'ses_nope', principal: 'ops-test' });
    expect(await accessLine((l) => l.status === 409)).toMatchObject({ method: 'POST', route: '/eve/v1/session/:sessionId', sessionId: created.sessionId });
    const everything = bridge.logs.map((line) => JSON.stringify(line)).join('\n');
    for (const secret of [TOKEN, QUERY_SECRET, COOKIE_SECRET]) expect(everything).not.toContain(secret);
  });

  test('logs a stream when it ends, with its duration and event count', async () => {
    const client = new Client({ host: bridge.url, headers: authorized });
    const { session, response } = await client.sessions.create({ message: 'count my events' });
    const result = await response!.result();
    const line = await accessLine((l) => l.route === '/eve/v1/session/:sessionId/stream' && l.sessionId === session.state.sessionId);
    expect(line).toMatchObject({ status: 200, transport: 'ndjson', events: result.events.length, principal: 'ops-test' });
  });
});

/** One sample's value in Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
const scrape = async () => (await fetch(metricsUrl)).text();

describe('metrics', () => {
  test('are served on a loopback port only', () => {
    expect(new URL(metricsUrl).hostname).toBe('127.0.0.1');
    expect(new URL(metricsUrl).port).not.toBe(new URL(bridge.url).port);
  });

  test('move during a turn and a sign-in', async () => {
    const before = await scrape();
    const client = new Client({ host: bridge.url, headers: authorized });
    const { session, response } = await client.sessions.create({ message: '/sleep 1500' });
    // A reader that stays connected while the turn streams.
    const live = session.stream({ startIndex: 0 })[Symbol.asyncIterator]();
    while ((await live.next()).value?.type !== 'message.appended');
    const during = await scrape();
    expect(sample(during, 'eve_bridge_active_sessions')).toBeGreaterThanOrEqual(1);
    expect(sample(during, 'eve_bridge_open_streams', '{transport="ndjson"}')).toBeGreaterThanOrEqual(1);
    await live.return?.();
    await response!.result();

    const signIn = await client.sessions.create({ message: '/tool connection__demo__whoami {}' });
    const parked = await readUntil(signIn.session.stream({ startIndex: 0 }), (e) => e.type === 'authorization.required');
    // Parked on the sign-in: the session is at work, the sign-in not counted yet.
    const whileParked = await scrape();
    expect(sample(whileParked, 'eve_bridge_active_sessions')).toBeGreaterThanOrEqual(1);
    expect(sample(whileParked, 'eve_bridge_sign_ins_total', '{outcome="connected"}')).toBe(sample(before, 'eve_bridge_sign_ins_total', '{outcome="connected"}'));
    await answerSignIn(browser, (parked.at(-1)!.data as { authorization: { url: string } }).authorization.url, 'Approve');
    expect((await signIn.response!.result()).message).toBe('Tool connection__demo__whoami returned: demo-user');

    const after = await scrape();
    const moved = (name: string, labels = '') => sample(after, name, labels) - sample(before, name, labels);
    expect(moved('eve_bridge_turns_total', '{outcome="completed"}')).toBe(2);
    expect(moved('eve_bridge_sign_ins_total', '{outcome="connected"}')).toBe(1);
    expect(moved('eve_bridge_journal_append_seconds_count')).toBeGreaterThan(0);
    expect(moved('eve_bridge_upstream_request_seconds_count', '{connection="demo",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(after).toContain('eve_bridge_redis_command_failures_total');
    process.stdout.write(
      `[metrics] journal appends: ${moved('eve_bridge_journal_append_seconds_count')} in ${(moved('eve_bridge_journal_append_seconds_sum') * 1000).toFixed(1)} ms\n`,
    );
  }, 60_000);
});
