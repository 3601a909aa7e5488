import { expect, test } from '@jest/globals';
import { init, useModel } from '@flue/runtime';
import { sqlite } from '@flue/runtime/node';
import type { Logger } from '@eve-flue/session-contract';
import { createScriptedModel, SCRIPTED_MODEL } from '../src/scripted-model.ts';
import { FlueHost } from '../src/flue-host.ts';

function Remembering(): string {
  useModel(SCRIPTED_MODEL);
  return 'You remember.';
}
Remembering.agentName = 'remembering';

test('a restart of Flue in place keeps every conversation; work arriving meanwhile waits and then runs', async () => {
  const { promise: restarted, resolve } = Promise.withResolvers<void>();
  const quiet = () => undefined;
  const logger = { debug: quiet, info: (_: unknown, message: string) => message.startsWith('restarted Flue') && resolve(), warn: quiet, error: quiet } as unknown as Logger;
  const model = createScriptedModel();
  // In memory: only the one store kept open across the restart still has the first turn.
  const host = await FlueHost.start({ agents: [Remembering], providers: [model.provider], db: sqlite(), recycleAfter: 2, drainMs: 1_000, logger });
  const ask = (id: string, message: string) =>
    host.run(async () => {
      const handle = init(Remembering, { id });
      return (await handle.read(await handle.dispatch({ message }))).text;
    });
  try {
    expect(await ask('a', 'first: apples')).toBe('Echo: first: apples');
    // Released while a turn runs: the restart waits for it, and the next turn waits for the restart.
    const running = ask('b', '/sleep 200');
    host.released();
    host.released();
    const waiting = ask('a', '/recall');
    const order: string[] = [];
    await Promise.all([running, restarted, waiting].map((p, i) => p.then(() => order.push(['running', 'restarted', 'waiting'][i]!))));
    expect(order).toEqual(['running', 'restarted', 'waiting']);
    expect(await waiting).toBe('Recall: ["first: apples"]');
  } finally {
    await host.stop();
  }
});
