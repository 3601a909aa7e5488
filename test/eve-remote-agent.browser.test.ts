import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { Client } from 'eve/client';
import { bearerTokens, defineFlueConnection, type ForwardedAssertion, type Principal } from '@eve-flue/bridge';
import { launchChromium } from './support/browser.ts';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { startEveParentApp, type EveParentApp } from './support/eve-parent.ts';
import { streamUntil } from './support/ndjson.ts';
import { answerSignIn } from './support/sign-in.ts';

/**
 * A real Eve 0.80.1 app (`eve dev`, offline on `mockModel`) delegates to running bridges with
 * `defineRemoteAgent`: one with route auth off, one behind a bearer token that trusts the app to
 * forward its caller. What the parent's own client sees is what is checked.
 */
const TOKEN = 'eve-parent-route-token-0123456789';
/** The demo as `eve-flue-bridge demo` runs it (its own process: one Flue runtime per process). */
let plain: CliBridge;
let guarded: DemoBridge;
let parent: EveParentApp;
let browser: Browser;
const forwarded: { forwarder: Principal; assertion: ForwardedAssertion }[] = [];

beforeAll(async () => {
  plain = await startCliBridge();
  guarded = await startDemoBridge((demo) => {
    const demoConnections = demo.config.connections;
    if (!Array.isArray(demoConnections)) throw new Error('the demo mounts a fixed list of connections');
    return {
      auth: bearerTokens({ [TOKEN]: 'eve-parent' }),
      trustedForwarders: (forwarder, assertion) => {
        forwarded.push({ forwarder, assertion });
        return forwarder.id === 'eve-parent';
      },
      // The demo server again, as `gated`: every call waits for a person's approval.
      connections: [...demoConnections, defineFlueConnection({ name: 'gated', url: demo.mcpUrl, approval: 'always' })],
    };
  });
  browser = await launchChromium();
  parent = await startEveParentApp({ FLUE_BRIDGE_URL: plain.url, GUARDED_BRIDGE_URL: guarded.url, GUARDED_BRIDGE_TOKEN: TOKEN });
}, 180_000);

afterAll(async () => {
  await parent?.stop();
  await browser?.close();
  await Promise.all([plain?.stop(), guarded?.close()]);
});

type Event = { type: string; data: Record<string, unknown> };

/** Sends `message` to the parent and reads its stream to the end of the turn. */
async function askParent(message: string, until: (event: Event) => boolean = (e) => e.type === 'session.waiting'): Promise<{ sessionId: string; events: Event[] }> {
  const client = new Client({ host: parent.url });
  const { session } = await client.sessions.create({ message });
  const sessionId = session.state.sessionId;
  return { sessionId, events: await streamUntil(parent.url, sessionId, until) };
}

const settledTask = (events: Event[]) => events.find((e) => e.type === 'task.settled')?.data;
const finalMessage = (events: Event[]) => events.filter((e) => e.type === 'message.completed').at(-1)?.data.message;

test("the parent's turn completes with the Flue agent's answer", async () => {
  const { events } = await askParent('hello from the parent');
  expect(settledTask(events)).toMatchObject({ status: 'completed', output: 'Echo: hello from the parent' });
  expect(finalMessage(events)).toContain('Echo: hello from the parent');
  expect(events.find((e) => e.type === 'agent.started')?.data.remote).toMatchObject({ url: plain.url });
}, 120_000);

test("a failing child fails the parent's task with its message", async () => {
  const { events } = await askParent('/fail');
  const settled = settledTask(events);
  expect(settled).toMatchObject({ status: 'failed' });
  expect(JSON.stringify(settled?.error)).toContain('The scripted model failed on purpose.');
}, 120_000);

test('an outputSchema comes back as data', async () => {
  const { events } = await askParent('structured /json {"city":"Paris","temperature":21}');
  expect(finalMessage(events)).toBe('Structured: {"status":"waiting","data":{"city":"Paris","temperature":21},"error":null}');
}, 120_000);

test("cancelling the parent's turn cancels the child's", async () => {
  const { sessionId, events } = await askParent('/sleep 60000', (e) => e.type === 'agent.started');
  const childId = String(events.at(-1)!.data.sessionId);
  await streamUntil(plain.url, childId, (e) => e.type === 'message.appended');
  const cancel = await fetch(`${parent.url}/eve/v1/session/${sessionId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(cancel.ok).toBe(true);
  const child = await streamUntil(plain.url, childId, (e) => e.type === 'turn.cancelled' || e.type === 'turn.completed');
  expect(child.at(-1)!.type).toBe('turn.cancelled');
}, 120_000);

test('behind a bearer token, with the caller forwarded, a sign-in in the child shows on the parent and, approved, the turn completes', async () => {
  const { sessionId, events } = await askParent('guarded /tool connection__demo__whoami {}', (e) => e.type === 'authorization.required');
  const required = events.at(-1)!.data;
  const url = (required.authorization as { url?: string } | undefined)?.url;
  expect(url).toMatch(new RegExp(`^${guarded.url}/eve/v1/oauth/`));
  const page = await answerSignIn(browser, url!, 'Approve');
  expect(page.text).toMatch(/signed in|approved|authorized/i);
  const rest = await streamUntil(parent.url, sessionId, (e) => e.type === 'session.waiting');
  expect(settledTask(rest)).toMatchObject({ status: 'completed' });
  expect(String(settledTask(rest)?.output)).toContain('Tool connection__demo__whoami returned');

  // The app authenticated with its token and asserted its own caller, which the bridge trusted.
  expect(forwarded.length).toBeGreaterThan(0);
  const [{ forwarder, assertion }] = forwarded as [(typeof forwarded)[number]];
  expect(forwarder.id).toBe('eve-parent');
  expect(assertion.principal.current.attributes['eve:forwarded-by']).toBe('eve-parent');
  // The child's turn ran as the forwarded principal: its sign-in is that principal's.
  expect(required.principalId ?? (required as { data?: { principalId?: string } }).data?.principalId).toBe(assertion.principal.current.principalId);
}, 180_000);

test("an approval the child asks for is the parent's to answer, and the answer resumes the child", async () => {
  const { sessionId, events } = await askParent('guarded /tool connection__gated__echo {"text":"approved by the parent"}', (e) => e.type === 'input.requested');
  const [request] = (events.at(-1)!.data.requests as { requestId: string; kind: string; options?: { id: string }[] }[]) ?? [];
  expect(request).toMatchObject({ kind: 'tool-approval' });
  const approve = request!.options?.find((o) => /approve|allow|yes/i.test(o.id))?.id ?? 'approve';
  const answered = await fetch(`${parent.url}/eve/v1/session/${sessionId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputResponses: [{ requestId: request!.requestId, optionId: approve }] }),
  });
  expect(answered.status).toBe(202);
  const rest = await streamUntil(parent.url, sessionId, (e) => e.type === 'session.waiting');
  expect(settledTask(rest)).toMatchObject({ status: 'completed' });
  expect(String(settledTask(rest)?.output)).toContain('Tool connection__gated__echo returned: approved by the parent');
}, 120_000);
