import { describe, expect, test } from '@jest/globals';
import { defineTool, type ToolOutputSchema } from '@flue/runtime';
import * as v from 'valibot';
import { silentLogger } from '@eve-flue/session-contract';
import { OwnTools } from '../src/own-tools.ts';

/** One tool whose run returns `result`, called once directly. */
const resultOf = (result: unknown, output?: ToolOutputSchema) =>
  new OwnTools([defineTool({ name: 'probe', description: 'Returns what it is given.', ...(output ? { output } : {}), run: () => result as never })], silentLogger).invoke('probe', {});

describe("the agent's own tools, run directly", () => {
  test("a run's result resolves as Flue resolves it: a string, the envelope's output, nothing as null", async () => {
    expect(await resultOf('plain')).toEqual({ status: 'completed', output: 'plain', text: 'plain' });
    expect(await resultOf({ output: { n: 1 }, terminate: true })).toEqual({ status: 'completed', output: { n: 1 }, text: '{"n":1}' });
    expect(await resultOf(undefined)).toEqual({ status: 'completed', output: null, text: 'null' });
    expect(await resultOf({ output: [1, 2] })).toEqual({ status: 'completed', output: [1, 2], text: '[1,2]' });
  });

  test('a result that is not an envelope, or that its output schema refuses, is the tool’s bug: thrown', async () => {
    await expect(resultOf(42)).rejects.toThrow('returned a bare number');
    await expect(resultOf({ n: 1 })).rejects.toThrow('unexpected key "n"');
    await expect(resultOf({ output: { n: 'one' } }, v.object({ n: v.number() }))).rejects.toThrow('does not match its output schema: n: Invalid type');
  });

  test('an output schema transforms the output, as Flue parses it', async () => {
    expect(await resultOf({ output: { n: '7' } }, v.object({ n: v.pipe(v.string(), v.toNumber()) }))).toMatchObject({ output: { n: 7 } });
  });

  test('a caller already gone: the run is abandoned', async () => {
    const tools = new OwnTools([defineTool({ name: 'idle', description: 'Never ends by itself.', run: () => new Promise<string>(() => undefined) })], silentLogger);
    expect(await tools.invoke('idle', {}, AbortSignal.abort())).toEqual({ status: 'failed', message: 'Tool "idle" was abandoned: its caller went away.' });
  });

  test('harness tools are neither published nor run', async () => {
    const tools = new OwnTools([defineTool({ name: 'peek', description: 'Needs a session.', harness: true, run: () => 'no' })], silentLogger);
    expect(tools.published()).toEqual([]);
    expect(tools.has('peek')).toBe(true);
    expect(await tools.invoke('peek', {})).toEqual({ status: 'failed', message: 'No published tool is named peek.' });
  });
});
