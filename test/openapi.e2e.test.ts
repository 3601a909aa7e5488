import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, type ClientSession } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineFlueConnection, defineOpenAPIConnection, type ToolCallContext } from '@eve-flue/bridge';
import type { ApprovalCall } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn, readUntil } from './support/events.ts';
import { recordingLogger } from './support/logs.ts';
import { startPetApi, type PetApi } from './support/pet-api.ts';
import { startEverythingServer, type ThirdPartyServer } from './support/third-party-mcp.ts';

// Real APIs whose documents fastify's own @fastify/swagger generates: OpenAPI 3.0 and Swagger 2.0.
const ROUTE = { ann: 'route-token-of-ann-0123456789', bob: 'route-token-of-bob-0123456789' };
const API_KEY = 'pets-api-key-never-shown-9931';
const LEGACY_KEY = 'legacy-api-key-never-shown-7713';
const logger = recordingLogger();
let pets: PetApi;
let legacy: PetApi;
let everything: ThirdPartyServer;
let bridge: DemoBridge;
const journals: unknown[][] = [];
const policyInputs: ApprovalCall['input'][] = [];
const argumentContexts: ToolCallContext[] = [];

type AnyEvent = { type: string; data: Record<string, unknown> };

beforeAll(async () => {
  pets = await startPetApi();
  legacy = await startPetApi({ swagger2: true });
  everything = await startEverythingServer();
  bridge = await startDemoBridge(
    (demo) => ({
      auth: bearerTokens({ [ROUTE.ann]: 'ann', [ROUTE.bob]: 'bob' }),
      connections: [
        defineOpenAPIConnection({
          name: 'pets',
          spec: `${pets.origin}/openapi.json`,
          description: 'The pet store',
          auth: { type: 'bearer', token: API_KEY },
          operations: { block: ['deletePet'] },
          toolCall: { providedArguments: { tenant: ({ principal }: ToolCallContext) => `tenant-of-${principal ?? 'nobody'}` } },
          approval: (call) => {
            policyInputs.push(call.input);
            return (call.input?.body as { name?: string } | undefined)?.name?.startsWith('Ask') ? 'user-approval' : 'not-applicable';
          },
        }),
        defineOpenAPIConnection({ name: 'yaml', spec: `${pets.origin}/openapi.yaml`, operations: { allow: ['getPet'] } }),
        // A key per caller.
        defineOpenAPIConnection({ name: 'legacy', spec: `${legacy.origin}/swagger.json`, auth: { type: 'bearer', token: ({ principal }) => (principal ? `${LEGACY_KEY}-${principal}` : '') } }),
        // An MCP connection with the same filters and provided arguments.
        defineFlueConnection({
          name: 'notes',
          url: demo.mcpUrl,
          tools: { block: ['whoami'] },
          toolCall: {
            providedArguments: {
              text: (ctx: ToolCallContext) => {
                argumentContexts.push(ctx);
                return `${ctx.toolName} for ${ctx.principal} in ${ctx.sessionId} as ${ctx.callId}`;
              },
            },
          },
        }),
        // The MCP reference server, which answers over event streams.
        defineFlueConnection({ name: 'everything', url: everything.url, tools: { block: ['echo'] }, toolCall: { providedArguments: { b: 1000 } } }),
      ],
    }),
    logger,
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await pets?.close();
  await legacy?.close();
  await everything?.close();
  expect(flueNamesIn(journals)).toEqual([]);
  // The keys reached the APIs (asserted above) and nowhere else: not the events, not the logs.
  const seen = JSON.stringify(journals) + logger.text();
  expect(journals.length).toBeGreaterThan(10);
  expect(seen).not.toContain(API_KEY);
  expect(seen).not.toContain(LEGACY_KEY);
});

const ann = () => new Client({ host: bridge.url, auth: { bearer: ROUTE.ann } });

async function call(tool: string, input: unknown) {
  const { session, response } = await ann().sessions.create({ message: `/tool ${tool} ${JSON.stringify(input)}` });
  const result = await response!.result();
  journals.push(result.events as unknown[]);
  const events = result.events as unknown as AnyEvent[];
  const action = events.find((e) => e.type === 'action.result')?.data as { status: string; result: { toolName: string; output: unknown; callId?: string } } | undefined;
  return { session, message: result.message, events, action };
}

const apiCalls = (api: PetApi) => api.seen.filter((s) => !s.url.startsWith('/openapi') && !s.url.startsWith('/swagger'));

describe('an OpenAPI 3.0 document from fastify', () => {
  test('one tool per operation, Eve-named, the blocked one left out; listed without calling any', async () => {
    const status = bridge.connections.status();
    expect(status.find((s) => s.name === 'pets')).toEqual({
      name: 'pets',
      state: 'ready',
      tools: ['connection__pets__listPets', 'connection__pets__createPet', 'connection__pets__getPet', 'connection__pets__get_pets_petId_photos'],
      missing: [],
    });
    expect(status.find((s) => s.name === 'yaml')?.tools).toEqual(['connection__yaml__getPet']);
    expect(status.find((s) => s.name === 'legacy')?.tools).toEqual([
      'connection__legacy__listPets',
      'connection__legacy__createPet',
      'connection__legacy__getPet',
      'connection__legacy__deletePet',
      'connection__legacy__get_pets_petId_photos',
    ]);
    expect(status.find((s) => s.name === 'notes')?.tools).toEqual(['connection__notes__echo']);
    expect(apiCalls(pets)).toEqual([]);
    // The spec fetch carries no credential.
    expect(pets.seen.filter((s) => s.url === '/openapi.json').every((s) => s.headers.authorization === undefined)).toBe(true);
  });

  test('path parameters URL-encoded, the bearer key reaching the API, the result { status, statusText, body }', async () => {
    const { action, message } = await call('connection__pets__getPet', { petId: 'p1' });
    expect(action).toMatchObject({ status: 'completed', result: { toolName: 'connection__pets__getPet', output: { status: 200, statusText: 'OK', body: { id: 'p1', name: 'Rex' } } } });
    expect(message).toContain('"status":200');
    const sent = apiCalls(pets).at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', url: '/pets/p1' });
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    await call('connection__pets__get_pets_petId_photos', { petId: 'a b/c' });
    expect(apiCalls(pets).at(-1)!.url).toBe('/pets/a%20b%2Fc/photos');
  });

  test('a 404 is a completed result', async () => {
    const { action } = await call('connection__pets__getPet', { petId: 'nope' });
    expect(action).toMatchObject({ status: 'completed', result: { output: { status: 404, statusText: 'Not Found', body: { error: 'no pet nope' } } } });
  });

  test('query arrays repeat the key; a provided argument replaces the model’s value, and the policy sees only the model’s', async () => {
    policyInputs.length = 0;
    await call('connection__pets__listPets', { tag: ['a', 'b'], tenant: 'evil' });
    expect(apiCalls(pets).at(-1)!.url).toBe('/pets?tag=a&tag=b&tenant=tenant-of-ann');
    expect(policyInputs).toEqual([{ tag: ['a', 'b'], tenant: 'evil' }]);
  });

  test('a JSON body', async () => {
    const { action } = await call('connection__pets__createPet', { body: { name: 'Fido' } });
    expect(action).toMatchObject({ status: 'completed', result: { output: { status: 201, body: { name: 'Fido', tenant: 'tenant-of-ann' } } } });
    const sent = apiCalls(pets).at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', url: '/pets?tenant=tenant-of-ann', body: { name: 'Fido' } });
    expect(sent.headers['content-type']).toBe('application/json');
  });

  test('`..` and `.` as a path parameter are refused with nothing sent', async () => {
    const before = apiCalls(pets).length;
    for (const petId of ['..', '.']) {
      const { action } = await call('connection__pets__getPet', { petId });
      expect(action?.status).toBe('failed');
      expect(JSON.stringify(action)).toContain('must not be \\".\\" or \\"..\\"');
    }
    expect(apiCalls(pets).length).toBe(before);
  });

  test('a blocked operation, and one outside an allowlist, are not offered', async () => {
    expect((await call('connection__pets__deletePet', { petId: 'p1' })).message).toBe('No tool named connection__pets__deletePet is available.');
    expect((await call('connection__yaml__listPets', {})).message).toBe('No tool named connection__yaml__listPets is available.');
    expect(apiCalls(pets).some((s) => s.method === 'DELETE')).toBe(false);
    const { action } = await call('connection__yaml__getPet', { petId: 'p1' });
    expect(action).toMatchObject({ status: 'completed', result: { output: { status: 200 } } });
  });
});

describe('approval gates on operations', () => {
  const waitForApproval = async (session: ClientSession) => {
    const seen = (await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'turn.waiting')) as unknown as AnyEvent[];
    const requested = seen.find((e) => e.type === 'input.requested')!.data as { requests: { requestId: string; kind: string; action: { toolName: string; input: unknown } }[] };
    return requested.requests[0]!;
  };

  test('a person approves: the request, the model’s input shown, the provided argument sent', async () => {
    const { session } = await ann().sessions.create({ message: '/tool connection__pets__createPet {"body":{"name":"Ask"},"tenant":"evil"}' });
    const request = await waitForApproval(session);
    expect(request).toMatchObject({ kind: 'tool-approval', action: { toolName: 'connection__pets__createPet', input: { body: { name: 'Ask' }, tenant: 'evil' } } });
    const answered = await (await session.respond([{ requestId: request.requestId, optionId: 'approve' }])).result();
    journals.push(answered.events as unknown[]);
    expect(answered.message).toContain('"status":201');
    expect(apiCalls(pets).at(-1)).toMatchObject({ method: 'POST', url: '/pets?tenant=tenant-of-ann', body: { name: 'Ask' } });
  });

  test('a person denies: TOOL_EXECUTION_DENIED, nothing reaches the API', async () => {
    const { session } = await ann().sessions.create({ message: '/tool connection__pets__createPet {"body":{"name":"Ask not"}}' });
    const request = await waitForApproval(session);
    const answered = await (await session.respond([{ requestId: request.requestId, optionId: 'deny' }])).result();
    journals.push(answered.events as unknown[]);
    const events = answered.events as unknown as AnyEvent[];
    expect(events.find((e) => e.type === 'action.result')?.data).toMatchObject({ status: 'failed', error: { code: 'TOOL_EXECUTION_DENIED' } });
    expect(apiCalls(pets).some((s) => JSON.stringify(s.body ?? null).includes('Ask not'))).toBe(false);
  });
});

describe('a Swagger 2.0 document from fastify', () => {
  test('the body parameter, and the caller’s key where the apiKey scheme puts it', async () => {
    const { action } = await call('connection__legacy__createPet', { body: { name: 'Old' }, tenant: 't' });
    expect(action).toMatchObject({ status: 'completed', result: { output: { status: 201, body: { name: 'Old', tenant: 't' } } } });
    const sent = apiCalls(legacy).at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', url: '/pets?tenant=t', body: { name: 'Old' } });
    expect(sent.headers['x-api-key']).toBe(`${LEGACY_KEY}-ann`);
    expect(sent.headers.authorization).toBeUndefined();
  });
});

describe('filters and provided arguments on an MCP connection', () => {
  test('the blocked tool is not offered; the provided argument replaces the model’s, with the call’s context', async () => {
    expect((await call('connection__notes__whoami', {})).message).toBe('No tool named connection__notes__whoami is available.');
    const { action, session } = await call('connection__notes__echo', { text: 'from the model' });
    const callId = action!.result.callId!;
    expect(callId).toMatch(/\S/);
    expect(action?.result.output).toBe(`echo for ann in ${session.state.sessionId} as ${callId}`);
    expect(argumentContexts.at(-1)).toEqual({ principal: 'ann', auth: expect.objectContaining({ id: 'ann' }), sessionId: session.state.sessionId, toolName: 'echo', callId });
  });
});

test('a third-party MCP server answering over event streams: filtered, its schema without the provided key, the value replaced', async () => {
  const status = bridge.connections.status().find((s) => s.name === 'everything')!;
  expect(status.state).toBe('ready');
  expect(status.tools).toContain('connection__everything__get-sum');
  expect(status.tools).not.toContain('connection__everything__echo');
  const described = bridge.connections.describeTools().find((t) => t.name === 'connection__everything__get-sum')!;
  expect(Object.keys((described.inputSchema as { properties: object }).properties)).toEqual(['a']);
  // `b` is not in the model's schema (were it still required, Flue would refuse the call).
  const { action } = await call('connection__everything__get-sum', { a: 1 });
  expect(JSON.stringify(action?.result.output)).toContain('1001');
  expect((await call('connection__everything__echo', { message: 'x' })).message).toBe('No tool named connection__everything__echo is available.');
});
