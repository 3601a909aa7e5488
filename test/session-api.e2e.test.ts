import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, ClientError, EveAgentStore, conversationReducer } from 'eve/client';
import { startCompatBridge, type RunningBridge } from './support/compat-bridge.ts';
import { collect, readUntil, typesOf } from './support/events.ts';

let bridge: RunningBridge;
let client: Client;
const streamRequests: string[] = [];

beforeAll(async () => {
  bridge = await startCompatBridge({ stream: { heartbeatMs: 1_000, leaseMs: 60_000 } });
  bridge.server.prependListener('request', (request) => {
    if (request.method === 'GET' && request.url?.includes('/stream')) streamRequests.push(request.url);
  });
  client = new Client({ host: bridge.url });
});

afterAll(async () => {
  await bridge.close();
});

describe('the real eve/client against the compat server', () => {
  test('health and info pass the client’s strict schemas', async () => {
    expect(await client.health()).toEqual({ ok: true, status: 'ready', workflowId: 'eve-flue-bridge' });
    const info = await client.info();
    expect(info.kind).toBe('eve-agent-info');
    expect(info.agent.name).toBe('scripted');
    expect(info.tools.static.map((t) => t.name)).toEqual(['connection__demo__echo']);
    expect(info.connections.map((c) => c.connectionName)).toEqual(['demo']);
  });

  test('create with a message runs the first turn', async () => {
    const { session, response } = await client.sessions.create({ message: 'hello' });
    const result = await response!.result();
    expect(result.status).toBe('waiting');
    expect(result.message).toBe('Echo: hello');
    expect(typesOf(result.events)).toEqual([
      'session.started',
      'turn.started',
      'message.received',
      'step.started',
      'message.appended',
      'message.appended',
      'message.completed',
      'step.completed',
      'turn.completed',
      'session.waiting',
    ]);
    expect(result.events.every((e) => /^evt_[0-9A-HJKMNP-TV-Z]{26}$/.test(e.meta!.id!))).toBe(true);
    expect(session.state.streamIndex).toBe(10);
  });

  test('a prewarmed session takes its first message as turn_0, then follow-ups', async () => {
    const { session } = await client.sessions.create();
    const first = await (await session.send('one')).result();
    expect(first.message).toBe('Echo: one');
    expect(first.events.find((e) => e.type === 'turn.started')?.data).toMatchObject({ turnId: 'turn_0', sequence: 0 });
    const second = await (await session.send('two')).result();
    expect(second.message).toBe('Echo: two');
    expect(second.events.find((e) => e.type === 'turn.started')?.data).toMatchObject({ turnId: 'turn_1', sequence: 1 });
    // Every event of a follow-up turn carries its delivery id, session.waiting included.
    const deliveryIds = new Set(second.events.map((e) => e.meta?.deliveryIds?.join(',')));
    expect(deliveryIds.size).toBe(1);
    expect([...deliveryIds][0]).toMatch(/^dlv_/);
  });

  test('an approval is answered with respond()', async () => {
    const { session, response } = await client.sessions.create({ message: '/approve hi' });
    const waiting = await response!.result();
    expect(waiting.status).toBe('waiting');
    expect(waiting.inputRequests).toHaveLength(1);
    expect(waiting.inputRequests[0]).toMatchObject({ kind: 'tool-approval', action: { toolName: 'connection__demo__echo' } });
    const answered = await (await session.respond([{ requestId: waiting.inputRequests[0]!.requestId, optionId: 'approve' }])).result();
    expect(answered.message).toBe('Approved: echo: hi');
    const resolved = answered.events.find((e) => e.type === 'input.resolved');
    expect(resolved?.data).toMatchObject({ resolutions: [{ outcome: 'approved', requestId: waiting.inputRequests[0]!.requestId }] });
    expect(answered.events.find((e) => e.type === 'action.result')?.data).toMatchObject({ status: 'completed' });
  });

  test('cancel ends a running turn with turn.cancelled and session.waiting', async () => {
    const { session, response } = await client.sessions.create({ message: '/sleep 20000' });
    const seen = await readUntil(response!, (e) => e.type === 'message.appended');
    expect(typesOf(seen)).toContain('turn.started');
    expect(await session.cancel()).toMatchObject({ status: 'accepted', sessionId: session.state.sessionId });
    const tail = await readUntil(session.stream({ startIndex: seen.length }), (e) => e.type === 'session.waiting');
    expect(typesOf(tail).slice(-2)).toEqual(['turn.cancelled', 'session.waiting']);
    // The session takes the next message normally.
    expect((await (await session.send('after cancel')).result()).message).toBe('Echo: after cancel');
  });

  test('a failing model fails the turn, not the session', async () => {
    const { session, response } = await client.sessions.create({ message: '/fail' });
    const result = await response!.result();
    expect(result.status).toBe('waiting');
    expect(typesOf(result.events)).toEqual(expect.arrayContaining(['step.failed', 'turn.failed', 'session.waiting']));
    expect(result.events.find((e) => e.type === 'turn.failed')?.data).toMatchObject({ code: 'MODEL_CALL_FAILED', terminal: false });
    expect((await (await session.send('still here')).result()).message).toBe('Echo: still here');
  });

  test('steering folds a second message into the running turn', async () => {
    const { session, response } = await client.sessions.create({ message: '/sleep 20000' });
    await readUntil(response!, (e) => e.type === 'message.appended');
    const steered = await (await session.send('change of plan', { turnPolicy: 'steer' })).result();
    const turnIds = new Set(steered.events.map((e) => (e.data as { turnId?: string }).turnId).filter(Boolean));
    expect([...turnIds]).toEqual(['turn_0']);
    expect(steered.message).toBe('Echo: change of plan');
  });

  test('queued messages wait for the running turn and keep their order', async () => {
    const { session, response } = await client.sessions.create({ message: '/sleep 3000' });
    // Queued while the first turn runs, as its stream shows: not after it ended.
    await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'message.appended');
    const queued = await session.send('queued', { turnPolicy: 'queue' });
    const sofar = await collect(session.stream({ startIndex: 0, follow: false }));
    expect(typesOf(sofar)).not.toContain('turn.completed');
    expect((await response!.result()).message).toBe('Slept.');
    const result = await queued.result();
    expect(result.message).toBe('Echo: queued');
    expect(result.events.find((e) => e.type === 'turn.started')?.data).toMatchObject({ turnId: 'turn_1' });
  });

  test('clear and compact report on the stream', async () => {
    const { session, response } = await client.sessions.create({ message: 'context' });
    const first = await response!.result();
    expect(await session.clear()).toMatchObject({ status: 'accepted', sessionId: session.state.sessionId });
    const cleared = await readUntil(session.stream({ startIndex: first.events.length }), (e) => e.type === 'session.waiting');
    expect(typesOf(cleared)).toEqual(['context.cleared', 'session.waiting']);
    expect(await session.compact()).toMatchObject({ status: 'accepted', sessionId: session.state.sessionId });
    const compacted = await readUntil(session.stream({ startIndex: first.events.length + 2 }), (e) => e.type === 'session.waiting');
    expect(typesOf(compacted)).toEqual(['compaction.requested', 'compaction.completed', 'session.waiting']);
  });

  test('reset retires the session', async () => {
    const { session, response } = await client.sessions.create({ message: 'bye' });
    await response!.result();
    expect(await session.reset({ reason: 'done' })).toMatchObject({ status: 'reset', previousSessionId: session.state.sessionId });
    const error = await session.send('anyone?').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).code).toBe('session_not_active');
    const events = await collect(session.stream({ startIndex: 0, follow: false }));
    expect(events.at(-1)?.type).toBe('session.completed');
    expect(await session.reset()).toMatchObject({ status: 'no_active_session' });
  });

  test('bounded, tail-relative and cursor reads agree, with no duplicate meta.id', async () => {
    const { session, response } = await client.sessions.create({ message: 'a' });
    await response!.result();
    await (await session.send('b')).result();
    const all = await collect(session.stream({ startIndex: 0, follow: false }));
    expect(all).toHaveLength(19);
    expect(new Set(all.map((e) => e.meta!.id)).size).toBe(all.length);
    const fromCursor = await collect(client.sessions.attach(session.state.sessionId).stream({ startIndex: 7, follow: false }));
    expect(fromCursor.map((e) => e.meta!.id)).toEqual(all.slice(7).map((e) => e.meta!.id));
    const last = await readUntil(session.stream({ startIndex: -1 }), () => true);
    expect(last.map((e) => e.type)).toEqual(['session.waiting']);
    expect(last[0]!.meta!.id).toBe(all.at(-1)!.meta!.id);
  });

  test('EveAgentStore runs two turns over one stream', async () => {
    const before = streamRequests.length;
    const store = new EveAgentStore({ host: bridge.url, reducer: conversationReducer });
    const finished: string[] = [];
    store.setCallbacks({ onFinish: (snapshot) => finished.push(snapshot.status) });
    await store.send({ message: 'first' });
    await store.send({ message: 'second' });
    const snapshot = store.snapshot;
    expect(snapshot.status).toBe('ready');
    expect(finished).toEqual(['ready', 'ready']);
    const completed = snapshot.events.filter((e) => e.type === 'message.completed').map((e) => (e.data as { message: string }).message);
    expect(completed).toEqual(['Echo: first', 'Echo: second']);
    expect(new Set(snapshot.events.map((e) => e.meta!.id)).size).toBe(snapshot.events.length);
    expect(streamRequests.length - before).toBe(1);
    store.reset();
  });
});
