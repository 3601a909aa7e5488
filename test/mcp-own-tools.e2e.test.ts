import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { defineTool } from '@flue/runtime';
import * as v from 'valibot';
import { Client as EveClient } from 'eve/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bearerTokens } from '@eve-flue/compat-server';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { recordingLogger } from './support/logs.ts';
import { callTool, connectMcp, rejection } from './support/mcp-client.ts';

// The agent's own Flue tools, from the config's `tools`: mounted on every turn, and with
// `mcp: { tools: true }` published and run directly, with no model turn.
const TOKEN = 'own-tools-token-of-ann-0001';
const logger = recordingLogger();
const runs = { lookup: 0, explode: 0 };
let slowSignal: AbortSignal | undefined;

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up by its number.',
  // The check has no JSON Schema: only the tool's own Valibot schema can refuse "abc".
  input: v.object({ orderId: v.pipe(v.string(), v.description('The order number'), v.check((id) => /^\d+$/.test(id), 'orderId must be digits')) }),
  output: v.object({ orderId: v.string(), status: v.string() }),
  run: ({ data, log }) => {
    runs.lookup += 1;
    log.info('looking the order up', { orderId: data.orderId });
    return { output: { orderId: data.orderId, status: 'shipped' } };
  },
});
const greet = defineTool({ name: 'greet', description: 'Says hello.', run: () => 'hello from the agent' });
const explode = defineTool({
  name: 'explode',
  description: 'Always fails.',
  run: () => {
    runs.explode += 1;
    throw new Error('database password is hunter2');
  },
});
const wrongOutput = defineTool({ name: 'wrong_output', description: 'Breaks its own output schema.', output: v.object({ count: v.number() }), run: () => ({ output: { count: 'many' } }) as never });
const slow = defineTool({
  name: 'slow',
  description: 'Runs until its signal aborts.',
  timeoutMs: 200,
  run: ({ signal }) =>
    new Promise<string>((resolve) => {
      slowSignal = signal;
      signal?.addEventListener('abort', () => resolve('too late'));
    }),
});
/** The `wait` tool's call: started, and its signal aborted. */
const waiting = { started: Promise.withResolvers<void>(), aborted: Promise.withResolvers<void>() };
const wait = defineTool({
  name: 'wait',
  description: 'Runs until its caller goes away.',
  run: ({ signal }) =>
    new Promise<string>((resolve) => {
      signal?.addEventListener('abort', () => {
        waiting.aborted.resolve();
        resolve('nobody left to tell');
      });
      waiting.started.resolve();
    }),
});
const steps = defineTool({
  name: 'steps',
  description: 'A durable tool: each step once per name.',
  durable: true,
  input: v.object({ names: v.array(v.string()) }),
  run: async ({ data, step }) => {
    const done: string[] = [];
    for (const name of data.names) done.push(await step.do(name, () => `did ${name}`));
    return { output: done };
  },
});
const peek = defineTool({ name: 'sandbox_peek', description: 'Needs the agent session.', harness: true, run: () => 'unreachable' });

let bridge: DemoBridge;

beforeAll(async () => {
  bridge = await startDemoBridge({ auth: bearerTokens({ [TOKEN]: 'ann' }), tools: [steps, lookupOrder, greet, explode, wrongOutput, slow, wait, peek], mcp: { tools: true } }, logger);
}, 60_000);

afterAll(async () => {
  await bridge?.close();
});

const textOf = (result: CallToolResult) => (result.content[0] as { type: 'text'; text: string }).text;

describe("the agent's own tools", () => {
  test('tools/list: in name order with the connection tools, with their JSON schemas; a harness tool is not published', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    const { tools } = await client.listTools();
    const published = tools.map((t) => t.name).slice(4);
    expect(published).toEqual(['connection__demo__echo', 'connection__demo__whoami', 'explode', 'greet', 'lookup_order', 'slow', 'steps', 'wait', 'wrong_output']);
    expect(tools.find((t) => t.name === 'lookup_order')).toEqual({
      name: 'lookup_order',
      description: 'Looks an order up by its number.',
      inputSchema: { type: 'object', properties: { orderId: { type: 'string', description: 'The order number' } }, required: ['orderId'] },
      outputSchema: { type: 'object', properties: { orderId: { type: 'string' }, status: { type: 'string' } }, required: ['orderId', 'status'] },
    });
    expect(tools.find((t) => t.name === 'greet')).toEqual({ name: 'greet', description: 'Says hello.', inputSchema: { type: 'object' } });
    expect(logger.entries.filter((e) => e.message.includes('harness tool'))).toEqual([expect.objectContaining({ level: 'warn', fields: { tool: 'sandbox_peek' } })]);
    await client.close();
  });

  test('tools/call runs the tool with no turn: an object output is structuredContent, a string is text', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    const before = { runs: runs.lookup, sessions: bridge.compat.activeSessions() };
    // The SDK's own callTool: it checks structuredContent against the listed outputSchema.
    const result = (await client.callTool({ name: 'lookup_order', arguments: { orderId: '4711' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ orderId: '4711', status: 'shipped' });
    expect(JSON.parse(textOf(result))).toEqual({ orderId: '4711', status: 'shipped' });
    expect(runs.lookup).toBe(before.runs + 1);
    expect(bridge.compat.activeSessions()).toBe(before.sessions);
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'debug', message: 'looking the order up', fields: expect.objectContaining({ tool: 'lookup_order', attributes: { orderId: '4711' } }) }));
    const greeting = await callTool(client, 'greet', {});
    expect(greeting).toEqual({ content: [{ type: 'text', text: 'hello from the agent' }] });
    await client.close();
  });

  test('arguments its schema rejects are invalid_input, and the tool did not run', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    const before = runs.lookup;
    expect(await rejection(client, 'lookup_order', { orderId: 4711 })).toMatchObject({ code: 'invalid_input', retryable: false });
    expect(await rejection(client, 'lookup_order', { orderId: 'abc' })).toEqual({ code: 'invalid_input', message: 'Invalid arguments for tool lookup_order: orderId: orderId must be digits', retryable: false });
    expect(runs.lookup).toBe(before);
    await client.close();
  });

  test('a throwing tool, an output its schema rejects and a timeout are internal, with an errorId and nothing of the failure', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    const failed = await callTool(client, 'explode', {});
    const error = (failed.structuredContent as { error: { code: string; errorId: string; message: string } }).error;
    expect(error).toEqual({ code: 'internal', errorId: expect.any(String), message: 'The server could not complete this tool call.', retryable: false });
    expect(JSON.stringify(failed)).not.toContain('hunter2');
    expect(runs.explode).toBe(1);
    const logged = logger.entries.find((e) => (e.fields as { errorId?: string }).errorId === error.errorId);
    expect(logged).toMatchObject({ level: 'error', fields: { tool: 'explode', err: expect.objectContaining({ message: 'database password is hunter2' }) } });

    expect(await rejection(client, 'wrong_output', {})).toMatchObject({ code: 'internal', errorId: expect.any(String) });
    expect(logger.text()).toContain('does not match its output schema');

    expect(await rejection(client, 'slow', {})).toMatchObject({ code: 'internal', errorId: expect.any(String) });
    expect(slowSignal?.aborted).toBe(true);
    expect(logger.text()).toContain('Tool \\"slow\\" timed out after 200ms.');
    await client.close();
  });

  test('a call whose MCP request closes (the host went away) aborts the running tool', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    const call = callTool(client, 'wait', {});
    await waiting.started.promise;
    // A host's own cancellation (notifications/cancelled) reaches no one on a stateless channel; closing does.
    await client.close();
    await expect(call).rejects.toThrow();
    await waiting.aborted.promise;
  });

  test('a durable tool runs each step once per name; a name used twice in one call fails it', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    expect(await callTool(client, 'steps', { names: ['a', 'b'] })).toEqual({ content: [{ type: 'text', text: '["did a","did b"]' }] });
    expect(await rejection(client, 'steps', { names: ['a', 'a'] })).toMatchObject({ code: 'internal' });
    expect(logger.text()).toContain('ran step.do(\\"a\\") twice in one call');
    await client.close();
  });

  test('a harness tool cannot be called directly', async () => {
    const client = await connectMcp(`${bridge.url}/eve/v1/mcp`, TOKEN);
    await expect(callTool(client, 'sandbox_peek', {})).rejects.toThrow(/Tool sandbox_peek not found/);
    await client.close();
  });

  test('in a conversation the model calls the same tool: the bridge mounted it from the config', async () => {
    const eve = new EveClient({ host: bridge.url, auth: { bearer: TOKEN } });
    const before = runs.lookup;
    const { response } = await eve.sessions.create({ message: '/tool lookup_order {"orderId":"42"}' });
    const result = await response!.result();
    expect(result.message).toBe('Tool lookup_order returned: {"orderId":"42","status":"shipped"}');
    const requested = result.events.find((e) => e.type === 'actions.requested')?.data as unknown as { actions: { toolName: string; input: unknown }[] };
    expect(requested.actions).toEqual([expect.objectContaining({ toolName: 'lookup_order', input: { orderId: '42' } })]);
    expect(runs.lookup).toBe(before + 1);
    // `/eve/v1/info` shows it as the agent's tool, with its description, before and after a turn.
    const info = (await (await fetch(`${bridge.url}/eve/v1/info`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { tools: { static: { name: string }[] } };
    expect(info.tools.static.filter((t) => t.name === 'lookup_order')).toEqual([
      expect.objectContaining({ description: 'Looks an order up by its number.', inputSchema: expect.objectContaining({ required: ['orderId'] }) }),
    ]);
  });
});
