import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { bearerTokens } from '@eve-flue/compat-server';
import { defineOpenAPIConnection } from '@eve-flue/bridge';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { flueNamesIn } from './support/events.ts';
import { startPetApi, type PetApi } from './support/pet-api.ts';

// Per-caller connection sets of OpenAPI connections: Ann's tenant and Bob's each have an API of their own.
const ROUTE = { ann: 'route-token-of-ann-0123456789', bob: 'route-token-of-bob-0123456789' };
let annApi: PetApi;
let bobApi: PetApi;
let bridge: DemoBridge;
const journals: unknown[] = [];

beforeAll(async () => {
  [annApi, bobApi] = await Promise.all([startPetApi(), startPetApi({ swagger2: true })]);
  bridge = await startDemoBridge({
    auth: bearerTokens({ [ROUTE.ann]: 'ann', [ROUTE.bob]: 'bob' }),
    connections: ({ principal }) =>
      principal?.id === 'ann'
        ? [defineOpenAPIConnection({ name: 'pets', spec: `${annApi.origin}/openapi.json`, auth: { type: 'bearer', token: 'key-of-ann-tenant' }, instanceKey: 'tenant-ann' })]
        : [defineOpenAPIConnection({ name: 'pets', spec: `${bobApi.origin}/swagger.json`, auth: { type: 'bearer', token: 'key-of-bob-tenant' }, instanceKey: 'tenant-bob' })],
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await annApi?.close();
  await bobApi?.close();
  expect(flueNamesIn(journals)).toEqual([]);
});

async function call(who: keyof typeof ROUTE, message: string) {
  const result = await (await new Client({ host: bridge.url, auth: { bearer: ROUTE[who] } }).sessions.create({ message })).response!.result();
  journals.push(result.events);
  return result;
}

const petCalls = (api: PetApi) => api.seen.filter((s) => s.url.startsWith('/pets'));

test('each caller’s turn calls their own API, with their tenant’s key where its document says', async () => {
  expect((await call('ann', '/tool connection__pets__getPet {"petId":"p1"}')).message).toContain('"status":200');
  expect(petCalls(annApi).map((s) => [s.url, s.headers.authorization])).toEqual([['/pets/p1', 'Bearer key-of-ann-tenant']]);
  expect(petCalls(bobApi)).toEqual([]);
  expect((await call('bob', '/tool connection__pets__getPet {"petId":"p1"}')).message).toContain('"status":200');
  expect(petCalls(bobApi).map((s) => [s.url, s.headers['x-api-key']])).toEqual([['/pets/p1', 'key-of-bob-tenant']]);
  expect(petCalls(annApi)).toHaveLength(1);
});
