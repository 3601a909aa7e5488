import { describe, expect, test } from '@jest/globals';
import type { EveEvent, EveEventDraft } from '@eve-flue/eve-protocol';
import { foldTurn, projectInvocation, publishedRequestId, repeatsResolvedBatch } from '../src/mcp/invocation-state.ts';

const base = { invocationId: 'ses_1', createdAt: '2026-01-01T00:00:00.000Z' };
const turn = { sequence: 0, turnId: 'turn_0' };
const step = { ...turn, stepIndex: 0 };
let index = 0;
const event = (draft: EveEventDraft, id = `evt_${index}`): EveEvent => ({ ...draft, meta: { id, at: '2026-01-01T00:00:00.000Z' }, streamIndex: index++ }) as EveEvent;
const approval = { requestId: 'req_1', kind: 'tool-approval' as const, prompt: 'Run echo?', action: { kind: 'tool-call' as const, callId: 'c1', toolName: 'connection__x__echo', input: {} } };
const state = (events: EveEvent[]) => projectInvocation(base, foldTurn(events));

describe('an invocation state from its session events', () => {
  test('nothing but the start yet: working', () => {
    expect(state([event({ type: 'turn.started', data: turn })])).toEqual({ ...base, status: 'working', pollAfterMs: 1000 });
  });

  test('the final message of a completed turn is the result; a tool-calls message is not', () => {
    const events = [
      event({ type: 'turn.started', data: turn }),
      event({ type: 'message.completed', data: { ...step, message: 'calling', finishReason: 'tool-calls' } }),
      event({ type: 'turn.completed', data: turn }),
    ];
    expect(state(events)).toEqual({ ...base, status: 'completed' });
    events.splice(2, 0, event({ type: 'message.completed', data: { ...step, message: 'done', finishReason: 'stop' } }));
    expect(state(events)).toEqual({ ...base, status: 'completed', result: 'done' });
  });

  test('a pending approval: input_required, keyed by the id derived from its event; answered, it is gone', () => {
    const asked = event({ type: 'input.requested', data: { ...step, requests: [approval] } }, 'evt_asked');
    const id = publishedRequestId('evt_asked', 'req_1');
    const events = [event({ type: 'turn.started', data: turn }), asked];
    expect(state(events)).toEqual({ ...base, status: 'input_required', inputRequests: { [id]: { ...approval, requestId: id } } });
    const response = { requestId: 'req_1', optionId: 'approve' };
    events.push(event({ type: 'input.resolved', data: { ...step, resolutions: [{ kind: 'tool-approval', outcome: 'approved', requestId: 'req_1', response }] } }));
    const view = foldTurn(events);
    expect(projectInvocation(base, view).status).toBe('working');
    expect(repeatsResolvedBatch(view, [{ requestId: id, optionId: 'approve' }])).toBe(true);
    expect(repeatsResolvedBatch(view, [{ requestId: id, optionId: 'deny' }])).toBe(false);
    expect(repeatsResolvedBatch(view, [{ requestId: 'other', optionId: 'approve' }])).toBe(false);
  });

  test('a sign-in outranks input and ends with authorization.completed', () => {
    const required = event({
      type: 'authorization.required',
      data: { ...step, name: 'demo', description: 'Sign in', attemptId: 'att_1', authorization: { url: 'https://b.example/s', displayName: 'Demo' }, webhookUrl: 'https://b.example/cb' },
    });
    const events = [event({ type: 'turn.started', data: turn }), required];
    expect(state(events)).toEqual({
      ...base,
      status: 'authorization_required',
      pollAfterMs: 1000,
      authorizations: [{ name: 'demo', description: 'Sign in', authorization: { url: 'https://b.example/s', displayName: 'Demo' }, webhookUrl: 'https://b.example/cb' }],
    });
    events.push(event({ type: 'authorization.completed', data: { ...step, name: 'demo', outcome: 'authorized', attemptId: 'att_1' } }));
    expect(state(events).status).toBe('working');
  });

  test('a failed turn: failed with the Eve code, the errorId and a message cut at 160 characters', () => {
    const message = 'x'.repeat(200);
    const events = [event({ type: 'turn.started', data: turn }), event({ type: 'turn.failed', data: { ...turn, code: 'MODEL_CALL_FAILED', message, details: { errorId: 'e-1' }, terminal: false } })];
    const failed = state(events);
    expect(failed).toEqual({ ...base, status: 'failed', error: { code: -32603, message: `${'x'.repeat(159)}…`, data: { runId: 'ses_1', eveCode: 'MODEL_CALL_FAILED', errorId: 'e-1' } } });
  });

  test('cancelled; and a later turn starts from a clean slate', () => {
    const events = [event({ type: 'turn.started', data: turn }), event({ type: 'turn.cancelled', data: turn })];
    expect(state(events)).toEqual({ ...base, status: 'cancelled' });
    events.push(event({ type: 'turn.started', data: { sequence: 1, turnId: 'turn_1' } }));
    expect(state(events)).toEqual({ ...base, status: 'working', pollAfterMs: 1000 });
  });
});
