import { expect, test } from '@jest/globals';
import { defineTool, init, useModel, useTool } from '@flue/runtime';
import { sqlite } from '@flue/runtime/node';
import type { Logger } from '@eve-flue/session-contract';
import { createScriptedModel, SCRIPTED_MODEL } from '../src/scripted-model.ts';
import { FlueHost } from '../src/flue-host.ts';
import { checkedTools, FLUE_RESERVED_TOOL_NAMES } from '../src/own-tools.ts';

const quiet = () => undefined;
const logger: Logger = { debug: quiet, info: quiet, warn: quiet, error: quiet };
const named = (name: string) => defineTool({ name, description: `A tool named ${name}.`, run: () => 'ran' });

test('the config refuses every name Flue keeps, naming the entry', () => {
  for (const name of FLUE_RESERVED_TOOL_NAMES) {
    expect(() => checkedTools([named('lookup'), named(name)])).toThrow(`\`tools[1]\` (${name}): Flue keeps the name ${name} for its own tool`);
  }
});

test('the names are Flue’s: an agent mounting a tool of any of them fails with tool_name_conflict, and one of another name runs', async () => {
  const names = [...FLUE_RESERVED_TOOL_NAMES, 'lookup'];
  const agents = names.map((name, index) => {
    const agent = () => {
      useModel(SCRIPTED_MODEL);
      useTool(named(name));
      return 'You have a tool.';
    };
    return Object.assign(agent, { agentName: `mounts-${index}` });
  });
  const host = await FlueHost.start({ agents, providers: [createScriptedModel().provider], db: sqlite(), recycleAfter: 1_000, drainMs: 1_000, logger });
  try {
    const outcomes = await Promise.all(
      agents.map((agent) =>
        host.run(async () => {
          const handle = init(agent, { id: 'one' });
          try {
            return (await handle.read(await handle.dispatch({ message: 'hello' }))).text;
          } catch (error) {
            const cause = (error as { cause?: { type?: string; message?: string } }).cause;
            return cause?.type === undefined ? String(error) : `${cause.type}: ${cause.message}`;
          }
        }),
      ),
    );
    expect(outcomes).toEqual([...FLUE_RESERVED_TOOL_NAMES].map((name) => `tool_name_conflict: Tool name "${name}" is reserved by the framework.`).concat('Echo: hello'));
  } finally {
    await host.stop();
  }
});
