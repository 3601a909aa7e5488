import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { defineTool, useModel, useTool } from '@flue/runtime';
import { Client } from 'eve/client';
import { SCRIPTED_MODEL } from '@eve-flue/bridge/testing';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';

// A tool both in the config's `tools` and mounted by the agent itself with useTool: Flue refuses
// the render (it has no API to read a render's tools, so the bridge cannot see this at start),
// and the turn's error says where the second copy comes from.
const lookup = defineTool({ name: 'lookup', description: 'Looks something up.', run: () => 'found' });
function Twice(): string {
  useModel(SCRIPTED_MODEL);
  useTool(lookup);
  return 'You look things up.';
}
Twice.agentName = 'twice';
const logger = recordingLogger();
let bridge: DemoBridge;

beforeAll(async () => {
  bridge = await startDemoBridge({ agent: Twice, tools: [lookup] }, logger);
}, 60_000);

afterAll(async () => {
  await bridge?.close();
});

test("a tool declared twice fails the turn with Flue's ToolNameConflictError, naming it and the config's copy", async () => {
  const { response } = await new Client({ host: bridge.url }).sessions.create({ message: 'hello' });
  const result = await response!.result();
  expect(result.events.find((e) => e.type === 'turn.failed')?.data).toMatchObject({ code: 'AGENT_FAILED', message: 'Duplicate tool name "lookup". "lookup" is one of the config\'s `tools`, which the bridge mounts on every turn: rename it, or do not also mount it with useTool().' });
  expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: 'turn failed', fields: expect.objectContaining({ err: expect.objectContaining({ message: expect.stringContaining('Duplicate tool name "lookup".') }) }) }));
});
