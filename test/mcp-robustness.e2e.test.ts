import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { defineFlueConnection } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn } from './support/events.ts';
import { freePort } from './support/free-port.ts';
import { startHangingGate, type HangingGate } from './support/hanging-gate.ts';
import { startEverythingServer, startSdkExampleServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// Third-party MCP servers that restart, hang after they listed their tools, or hang from the start.
type Example = Awaited<ReturnType<typeof startSdkExampleServer>>;
let restarting: Example;
let everything: Awaited<ReturnType<typeof startEverythingServer>>;
let listedThenHung: Example;
let gate: HangingGate;
let hungFromStart: HangingGate | undefined;
let hungPort: number;
let bridge: DemoBridge;
const journals: unknown[] = [];
type AnyEvent = { type: string; data: Record<string, unknown> };

/** Long enough that a turn waiting for a hung server could never finish inside a test. */
const HOURS = 3_600_000;

beforeAll(async () => {
  restarting = await startSdkExampleServer();
  everything = await startEverythingServer();
  listedThenHung = await startSdkExampleServer();
  gate = await startHangingGate({ target: { host: '127.0.0.1', port: listedThenHung.port } });
  // Nothing listens there at startup (the bridge finds it unavailable); a hung server does later.
  hungPort = await freePort();
  const viaGate = `http://127.0.0.1:${gate.port}/mcp`;
  bridge = await startDemoBridge(
    {
      connections: [
        defineFlueConnection({ name: 'restarting', url: restarting.url }),
        defineFlueConnection({ name: 'everything', url: everything.url, tools: ['echo'] }),
        defineFlueConnection({ name: 'stuck', url: viaGate, timeoutMs: HOURS }),
        defineFlueConnection({ name: 'slow', url: viaGate, timeoutMs: 1_000 }),
        defineFlueConnection({ name: 'hung', url: `http://127.0.0.1:${hungPort}/mcp`, timeoutMs: HOURS }),
      ],
    },
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  for (const server of [restarting, everything, listedThenHung] as ThirdPartyServer[]) await server?.close();
  await gate?.close();
  await hungFromStart?.close();
  expect(flueNamesIn(journals)).toEqual([]);
});

const client = () => new Client({ host: bridge.url });
const toolResult = (events: readonly unknown[]) => (events as AnyEvent[]).find((e) => e.type === 'action.result')?.data as {
  status: string;
  result: { output: unknown };
  error?: { message: string };
};

test('a stateful server restarts mid-session: the next call opens a new MCP session and works', async () => {
  const { session, response } = await client().sessions.create({ message: '/tool connection__restarting__greet {"name":"before"}' });
  expect((await response!.result()).message).toBe('Tool connection__restarting__greet returned: Hello, before!');
  const port = restarting.port;
  await restarting.close();
  restarting = await startSdkExampleServer(port);
  expect(restarting.output()).not.toContain('Session initialized');

  const after = await (await session.send('/tool connection__restarting__greet {"name":"after"}')).result();
  journals.push(after.events);
  expect(toolResult(after.events)).toMatchObject({ status: 'completed', result: { output: 'Hello, after!' } });
  expect(after.message).toBe('Tool connection__restarting__greet returned: Hello, after!');
  // The restarted server answered the old session id with 404; the bridge opened a new session.
  expect(restarting.output()).toContain('Session initialized');
}, 30_000);

test('server-everything restarts mid-session (it answers 400 “No valid session ID”): the next call works', async () => {
  const { session, response } = await client().sessions.create({ message: '/tool connection__everything__echo {"message":"before"}' });
  expect((await response!.result()).message).toBe('Tool connection__everything__echo returned: Echo: before');
  const port = everything.port;
  await everything.close();
  everything = await startEverythingServer(port);
  const after = await (await session.send('/tool connection__everything__echo {"message":"after"}')).result();
  journals.push(after.events);
  expect(after.message).toBe('Tool connection__everything__echo returned: Echo: after');
}, 30_000);

test('a server that hangs after listing its tools costs a plain turn nothing; a call costs at most its timeout', async () => {
  gate.hang();
  const plain = await (await client().sessions.create({ message: 'hello while stuck' })).response!.result();
  journals.push(plain.events);
  expect(plain.message).toBe('Echo: hello while stuck');
  expect(plain.events.map((e) => e.type)).toContain('turn.completed');
  // Its tools are offered all the same: nothing asked the hung server to open a session.
  expect(gate.unanswered()).toBe(0);

  const call = await (await client().sessions.create({ message: '/tool connection__slow__greet {"name":"anyone"}' })).response!.result();
  journals.push(call.events);
  expect(toolResult(call.events)).toMatchObject({ status: 'failed' });
  expect(toolResult(call.events).error?.message).toMatch(/timed out/i);
  expect(call.events.map((e) => e.type)).toContain('turn.completed');
  expect(gate.unanswered()).toBeGreaterThan(0);
}, 30_000);

test('a server unavailable at startup that now hangs: a plain turn completes while the server has not answered', async () => {
  const status = (await (await fetch(`${bridge.url}/eve/v1/connections`)).json()) as { connections: { name: string; state: string; missing: string[] }[] };
  expect(status.connections.find((c) => c.name === 'hung')).toMatchObject({ state: 'error', missing: [expect.stringMatching(/^the server is unavailable: .*ECONNREFUSED/)] });
  hungFromStart = await startHangingGate({ port: hungPort });
  const { session, response } = await client().sessions.create({ message: 'first' });
  const first = await response!.result();
  journals.push(first.events);
  expect(first.message).toBe('Echo: first');
  // The bridge tried the server again in the background, and it has not answered (its timeout is hours).
  await until(() => hungFromStart!.unanswered() > 0);
  const second = await (await session.send('second')).result();
  journals.push(second.events);
  expect(second.message).toBe('Echo: second');
}, 30_000);

test('a validation failure names the tool by its Eve name: in action.result, error.message and the reply', async () => {
  const result = await (await client().sessions.create({ message: '/tool connection__restarting__greet {}' })).response!.result();
  journals.push(result.events);
  const failed = toolResult(result.events);
  expect(failed.status).toBe('failed');
  expect(failed.error?.message).toContain('Validation failed for tool "connection__restarting__greet"');
  expect(String(failed.result.output)).toContain('"connection__restarting__greet"');
  expect(result.message).toContain('Validation failed for tool "connection__restarting__greet"');
  expect(flueNamesIn([result.events, result.message])).toEqual([]);
});

/** Resolves once `condition` holds (checked as the event loop turns), failing after 10 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
