/**
 * The turn translator on its own: Flue observations in, Eve step events out, in Flue's order.
 * The turn is a recorder of what the translator asks of it.
 */
import { expect, test } from '@jest/globals';
import type { FlueObservation } from '@flue/runtime';
import type { TurnContext } from '@eve-flue/session-contract';
import { TurnTranslator } from '../src/turn-translator.ts';

function recordingTurn(): { turn: TurnContext; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const record = (name: string) => async (...args: unknown[]) => {
    calls.push([name, ...args]);
    return 0;
  };
  const turn = {
    startStep: record('startStep'),
    emit: record('emit'),
    completeStep: record('completeStep'),
    failStep: record('failStep'),
  } as unknown as TurnContext;
  return { turn, calls };
}

// Observations carry more than the translator reads; these are the parts it does.
const observe = (observation: Record<string, unknown>) => observation as unknown as FlueObservation;
const eveName = (flueName: string) => flueName.replace(/^mcp__/, 'connection__');
const usage = { input: 3, output: 2, cacheRead: 1, cacheWrite: 0, totalTokens: 5, cost: { total: 0 } };

test('a model turn becomes one step: start, appends, the completed message, the end with usage', async () => {
  const { turn, calls } = recordingTurn();
  const translator = new TurnTranslator(turn, 'scripted/test', eveName);
  translator.handle(observe({ type: 'turn_start', purpose: 'agent', turnId: 't1' }));
  translator.handle(observe({ type: 'text_delta', turnId: 't1', text: 'Hel' }));
  translator.handle(observe({ type: 'text_delta', turnId: 't1', text: 'lo' }));
  translator.handle(observe({ type: 'turn', purpose: 'agent', turnId: 't1', response: { finishReason: 'stop', usage } }));
  await translator.flushed();
  expect(calls).toEqual([
    ['startStep', 'scripted/test'],
    ['emit', 'message.appended', { messageDelta: 'Hel' }],
    ['emit', 'message.appended', { messageDelta: 'lo' }],
    ['emit', 'message.completed', { message: 'Hello', finishReason: 'stop' }],
    ['completeStep', { finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 1, cacheWriteTokens: 0 } }],
  ]);
});

test("deltas that arrived live are not written again when Flue reports its own copies", async () => {
  const { turn, calls } = recordingTurn();
  const translator = new TurnTranslator(turn, 'scripted/test', eveName);
  translator.live('t1', { kind: 'text', delta: 'Hi' });
  translator.handle(observe({ type: 'turn_start', purpose: 'agent', turnId: 't1' }));
  translator.handle(observe({ type: 'text_delta', turnId: 't1', text: 'Hi' }));
  translator.handle(observe({ type: 'turn', purpose: 'agent', turnId: 't1', response: { finishReason: 'stop' } }));
  await translator.flushed();
  expect(calls.filter((call) => call[1] === 'message.appended')).toEqual([['emit', 'message.appended', { messageDelta: 'Hi' }]]);
  expect(calls.filter((call) => call[0] === 'startStep')).toHaveLength(1);
});

test('a failed model call fails the step and names the turn error', async () => {
  const { turn, calls } = recordingTurn();
  const translator = new TurnTranslator(turn, 'scripted/test', eveName);
  translator.handle(observe({ type: 'turn_start', purpose: 'agent', turnId: 't1' }));
  translator.handle(observe({ type: 'turn', purpose: 'agent', turnId: 't1', isError: true, response: { finishReason: 'error', error: { message: 'quota' } } }));
  await translator.flushed();
  expect(calls.at(-1)).toEqual(['failStep', { code: 'MODEL_CALL_FAILED', message: 'quota' }]);
  expect(translator.stepError).toMatchObject({ code: 'MODEL_CALL_FAILED', message: 'quota' });
});

test('tool calls are requested and answered under their Eve names', async () => {
  const { turn, calls } = recordingTurn();
  const translator = new TurnTranslator(turn, 'scripted/test', eveName);
  translator.handle(observe({ type: 'turn_start', purpose: 'agent', turnId: 't1' }));
  const call = { type: 'toolCall', id: 'call_1', name: 'mcp__demo__echo', arguments: { text: 'hi' } };
  translator.handle(observe({ type: 'turn', purpose: 'agent', turnId: 't1', response: { finishReason: 'toolUse', output: { content: [call] } } }));
  translator.handle(observe({ type: 'tool_start', toolCallId: 'call_1', toolName: 'mcp__demo__echo', args: { text: 'hi' } }));
  translator.handle(observe({ type: 'tool', toolCallId: 'call_1', toolName: 'mcp__demo__echo', isError: false, result: { content: [{ type: 'text', text: 'hi' }] } }));
  await translator.flushed();
  expect(calls).toContainEqual(['emit', 'actions.requested', { actions: [{ kind: 'tool-call', callId: 'call_1', toolName: 'connection__demo__echo', input: { text: 'hi' } }] }]);
  expect(calls.at(-1)).toEqual([
    'emit',
    'action.result',
    { result: { kind: 'tool-result', callId: 'call_1', toolName: 'connection__demo__echo', output: 'hi' }, status: 'completed' },
  ]);
});
