import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { readUntil, typesOf } from './support/events.ts';

let bridge: DemoBridge;
let client: Client;

beforeAll(async () => {
  bridge = await startDemoBridge();
  client = new Client({ host: bridge.url });
});

afterAll(async () => {
  await bridge.close();
});

const dataOf = <T>(events: readonly { type: string; data?: unknown }[], type: string): T[] =>
  events.filter((e) => e.type === type).map((e) => e.data as T);

describe('a real Flue agent behind the Eve API', () => {
  test('a connection tool call is reported under its Eve name, with its result and the reply', async () => {
    const { response } = await client.sessions.create({ message: '/tool connection__demo__echo {"text":"hi"}' });
    const result = await response!.result();
    expect(result.status).toBe('waiting');
    const [requested] = dataOf<{ actions: { toolName: string; input: unknown; callId: string }[] }>(result.events, 'actions.requested');
    expect(requested?.actions).toEqual([expect.objectContaining({ kind: 'tool-call', toolName: 'connection__demo__echo', input: { text: 'hi' } })]);
    const [outcome] = dataOf<{ result: { callId: string; toolName: string; output: unknown }; status: string }>(result.events, 'action.result');
    expect(outcome).toMatchObject({ status: 'completed', result: { toolName: 'connection__demo__echo', output: 'hi', callId: requested!.actions[0]!.callId } });
    expect(result.message).toBe('Tool connection__demo__echo returned: hi');
    expect(result.events.at(-1)?.type).toBe('session.waiting');
    expect(JSON.stringify(result.events)).not.toContain('mcp__demo__echo');
  });

  test('a plain message streams its reply in deltas', async () => {
    const { response } = await client.sessions.create({ message: 'hello there' });
    const result = await response!.result();
    expect(result.message).toBe('Echo: hello there');
    const deltas = dataOf<{ messageDelta: string }>(result.events, 'message.appended').map((d) => d.messageDelta);
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.join('')).toBe('Echo: hello there');
    expect(typesOf(result.events)).toEqual(expect.arrayContaining(['step.started', 'message.completed', 'step.completed', 'turn.completed']));
  });

  test('reasoning streams as reasoning.appended, then reasoning.completed, before the reply', async () => {
    const { response } = await client.sessions.create({ message: '/think tea' });
    const result = await response!.result();
    const deltas = dataOf<{ reasoningDelta: string }>(result.events, 'reasoning.appended').map((d) => d.reasoningDelta);
    expect(deltas.join('')).toBe('Considering tea step by step.');
    expect(dataOf(result.events, 'reasoning.completed')).toEqual([expect.objectContaining({ reasoning: 'Considering tea step by step.' })]);
    const types = typesOf(result.events);
    expect(types.indexOf('reasoning.completed')).toBeLessThan(types.indexOf('message.completed'));
    expect(result.message).toBe('Thought about tea.');
  });

  test('an inline image reaches the model as an attachment; other files as a note naming them', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
    const { response } = await client.sessions.create({
      message: [
        { type: 'text', text: 'look' },
        { type: 'file', mediaType: 'image/png', filename: 'dot.png', data: png },
        { type: 'file', mediaType: 'application/pdf', filename: 'report.pdf', data: 'data:application/pdf;base64,JVBERi0=' },
      ],
    });
    const result = await response!.result();
    expect(result.message).toBe('Echo: look\n\n[The person attached "report.pdf" (application/pdf, 5 bytes), which this agent cannot read.] [1 image]');
  });

  test('the Flue instance keeps the conversation across turns', async () => {
    const { session, response } = await client.sessions.create({ message: 'first' });
    await response!.result();
    const second = await (await session.send('second')).result();
    expect(second.message).toBe('Echo: second');
    expect(second.events.find((e) => e.type === 'turn.started')?.data).toMatchObject({ turnId: 'turn_1' });
  });

  test('cancel during /sleep aborts the Flue submission and the session goes on', async () => {
    const { session, response } = await client.sessions.create({ message: '/sleep 20000' });
    await readUntil(response!, (e) => e.type === 'message.appended');
    await session.cancel();
    const rest = await readUntil(session.stream(), (e) => e.type === 'session.waiting');
    expect(typesOf(rest).slice(-2)).toEqual(['turn.cancelled', 'session.waiting']);
    const next = await (await session.send('after cancel')).result();
    expect(next.message).toBe('Echo: after cancel');
  });

  test('/fail fails the turn without ending the session', async () => {
    const { session, response } = await client.sessions.create({ message: '/fail' });
    const result = await response!.result();
    expect(result.status).toBe('waiting');
    expect(dataOf(result.events, 'step.failed')[0]).toMatchObject({ code: 'MODEL_CALL_FAILED', message: 'The scripted model failed on purpose.' });
    expect(dataOf(result.events, 'turn.failed')[0]).toMatchObject({ code: 'MODEL_CALL_FAILED', terminal: false });
    expect((await (await session.send('still there?')).result()).message).toBe('Echo: still there?');
  });

  test('a steering message joins the running turn at its next boundary', async () => {
    const { session, response } = await client.sessions.create({ message: '/sleep 1500' });
    await readUntil(response!, (e) => e.type === 'message.appended');
    const steered = await (await session.send('and then this')).result();
    const turnIds = new Set(steered.events.map((e) => (e.data as { turnId?: string }).turnId).filter(Boolean));
    expect([...turnIds]).toEqual(['turn_0']);
    expect(steered.message).toBe('Echo: and then this');
  });

  test('info lists the agent and its tools by their Eve names', async () => {
    const info = await client.info();
    expect(info.agent.name).toBe('demo');
    expect(info.agent.model.id).toBe('scripted/demo');
    expect(info.tools.static.map((t) => t.name)).toContain('connection__demo__echo');
    expect(info.tools.static.map((t) => t.name)).not.toContain('mcp__demo__echo');
    expect(info.connections).toEqual([expect.objectContaining({ connectionName: 'demo', url: bridge.mcpUrl })]);
  });
});
