import { expect, test } from '@jest/globals';
import { useDemoWithBrowser } from './support/demo-with-browser.ts';
import { readUntil } from './support/events.ts';
import { answerSignIn } from './support/sign-in.ts';

const demo = useDemoWithBrowser();

type AnyEvent = { type: string; data: Record<string, unknown> };
const WHOAMI = '/tool connection__demo__whoami {}';

/** Sends a message and, once the stream asks for a sign-in, answers it in the browser. */
async function sendAndSignIn(message: string, button: 'Approve' | 'Deny') {
  const { session, response } = await demo.client.sessions.create({ message });
  const result = response!.result();
  const seen = (await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'authorization.required')) as AnyEvent[];
  const required = seen.at(-1)!;
  const page = await answerSignIn(demo.browser, (required.data.authorization as { url: string }).url, button);
  return { session, required, page, result: await result };
}

test('a protected tool parks the turn, the person approves in the browser, and the same turn resumes', async () => {
  const { session, required, page, result } = await sendAndSignIn(WHOAMI, 'Approve');
  expect(page.text).toContain('You are signed in');
  expect(required.data).toMatchObject({
    name: 'demo',
    description: 'Authorization required for demo',
    attemptId: expect.stringMatching(/^att_/),
    authorization: { displayName: 'Demo', url: expect.stringMatching(/\/eve\/v1\/oauth\/start\/att_/), expiresAt: expect.any(String) },
    webhookUrl: `${demo.bridge.publicUrl}/eve/v1/oauth/callback`,
  });
  // Eve's fields only: nothing a strict reader of Eve's event (eve remote invoke --resume) refuses.
  expect(Object.keys(required.data).sort()).toEqual(['attemptId', 'authorization', 'description', 'name', 'sequence', 'stepIndex', 'turnId', 'webhookUrl']);

  const events = result.events as unknown as AnyEvent[];
  const types = events.map((e) => e.type);
  const order = ['authorization.required', 'turn.waiting', 'authorization.granted', 'authorization.completed', 'action.result', 'session.waiting'];
  expect(order.map((t) => types.indexOf(t))).toEqual([...order.map((t) => types.indexOf(t))].sort((a, b) => a - b));
  expect(events.find((e) => e.type === 'authorization.completed')?.data).toMatchObject({ outcome: 'authorized', attemptId: required.data.attemptId });
  expect(events.find((e) => e.type === 'action.result')?.data).toMatchObject({ status: 'completed', result: { toolName: 'connection__demo__whoami', output: 'demo-user' } });
  expect(result.message).toBe('Tool connection__demo__whoami returned: demo-user');
  const turnIds = new Set(events.map((e) => e.data.turnId).filter(Boolean));
  expect([...turnIds]).toEqual(['turn_0']);

  // The token stays with the bridge: the next call needs no sign-in.
  const again = await (await session.send(WHOAMI)).result();
  expect(again.message).toBe('Tool connection__demo__whoami returned: demo-user');
  expect(again.events.map((e) => e.type)).not.toContain('authorization.required');
});

test('a person who denies gets a declined sign-in, and the model a tool error it can explain', async () => {
  const { page, result } = await sendAndSignIn(WHOAMI, 'Deny');
  expect(page.text).toContain('declined');
  const events = result.events as unknown as AnyEvent[];
  expect(events.find((e) => e.type === 'authorization.completed')?.data).toMatchObject({ outcome: 'declined' });
  expect(events.map((e) => e.type)).not.toContain('authorization.granted');
  expect(events.find((e) => e.type === 'action.result')?.data).toMatchObject({ status: 'failed', result: { isError: true } });
  expect(result.message).toMatch(/^Tool connection__demo__whoami returned: Demo is not connected \(declined/);
  expect(result.status).toBe('waiting');
});

test('the caller sees each connection’s state, and can sign out', async () => {
  const { session, result } = await sendAndSignIn(WHOAMI, 'Approve');
  expect(result.message).toBe('Tool connection__demo__whoami returned: demo-user');
  const sessionId = session.state.sessionId;
  const status = async (query = `?sessionId=${sessionId}`) =>
    ((await (await fetch(`${demo.bridge.url}/eve/v1/connections${query}`)).json()) as { connections: { name: string; state: string; tools: string[]; missing: string[] }[] }).connections;
  expect(await status()).toEqual([
    { name: 'demo', state: 'ready', tools: ['connection__demo__echo', 'connection__demo__whoami'], missing: [] },
  ]);
  expect((await status(''))[0]).toMatchObject({ state: 'needs_sign_in', missing: [expect.stringMatching(/^sign in to demo/)] });

  const signOut = await fetch(`${demo.bridge.url}/eve/v1/connections/demo/authorization?sessionId=${sessionId}`, { method: 'DELETE' });
  expect(await signOut.json()).toEqual({ ok: true, status: 'signed_out', revoked: true });
  expect((await status())[0]!.state).toBe('needs_sign_in');
  const unknown = await fetch(`${demo.bridge.url}/eve/v1/connections/nope/authorization`, { method: 'DELETE' });
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toMatchObject({ ok: false, code: 'not_found' });

  // Signed out: the next call asks again.
  const next = await session.send(WHOAMI);
  const asked = await readUntil(session.stream(), (e) => e.type === 'authorization.required');
  expect(asked.at(-1)?.type).toBe('authorization.required');
  await session.cancel();
  await next.result();
});
