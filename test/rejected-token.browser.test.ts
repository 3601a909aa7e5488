import { expect, test } from '@jest/globals';
import { useDemoWithBrowser } from './support/demo-with-browser.ts';
import { readUntil } from './support/events.ts';
import { eventCount, parkOnSignIn, WHOAMI } from './support/parked.ts';
import { answerSignIn } from './support/sign-in.ts';

const demo = useDemoWithBrowser();

test('a stored token the provider rejects, with no refresh: no sign-in until a tool needs one, then exactly one', async () => {
  const parked = await parkOnSignIn(demo.client);
  await answerSignIn(demo.browser, parked.startUrl, 'Approve');
  expect((await parked.result).message).toBe('Tool connection__demo__whoami returned: demo-user');
  const { session } = parked;

  // The provider no longer knows the token (as after it restarted), and it cannot be refreshed.
  const subject = `session:${session.state.sessionId}`;
  const held = (await demo.bridge.authStore.getToken(subject, 'demo'))!;
  const { refreshToken: _dropped, ...unrefreshable } = held;
  await demo.bridge.authStore.putToken(subject, 'demo', { ...unrefreshable, accessToken: 'forgotten-by-the-provider' });

  const plain = await (await session.send('just chatting')).result();
  expect(plain.message).toBe('Echo: just chatting');
  // A public tool works without a token: the rejected one is dropped, and nobody is asked to sign in.
  const echo = await (await session.send('/tool connection__demo__echo {"text":"still public"}')).result();
  expect(echo.message).toBe('Tool connection__demo__echo returned: still public');
  for (const result of [plain, echo]) expect(result.events.map((e) => e.type)).not.toContain('authorization.required');

  // The protected tool asks once, and the same turn answers after the sign-in.
  const from = await eventCount(session);
  const whoami = await session.send(WHOAMI);
  const seen = await readUntil(session.stream({ startIndex: from }), (e) => e.type === 'authorization.required');
  await answerSignIn(demo.browser, (seen.at(-1)!.data as { authorization: { url: string } }).authorization.url, 'Approve');
  const result = await whoami.result();
  expect(result.message).toBe('Tool connection__demo__whoami returned: demo-user');
  expect(result.events.filter((e) => e.type === 'authorization.required')).toHaveLength(1);
});
