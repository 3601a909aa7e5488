import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { ConnectionRegistry, defineFlueConnection, fixedTokenAuthorizer, flueMountFor } from '@eve-flue/connections';
import type { Listening } from './support/listen.ts';
import { startToolServers } from './support/tool-servers.ts';

let server: Listening;

beforeAll(async () => {
  server = await startToolServers();
});

afterAll(async () => {
  await server.close();
});

test('connections whose tool names collide: the later one is left out, and its status names both sides', async () => {
  const url = `${server.url}/mcp/echo`;
  const registry = new ConnectionRegistry(
    [
      defineFlueConnection({ name: 'my-server', url }),
      defineFlueConnection({ name: 'other', url, tools: ['echo', 'missing'] }),
      defineFlueConnection({ name: 'dead', url: 'http://127.0.0.1:9/mcp' }),
    ],
    (definition) => flueMountFor(definition).fetch,
  );
  const statuses = await registry.refresh();
  expect(statuses[0]).toEqual({ name: 'my-server', state: 'ready', tools: ['connection__my-server__echo'], missing: [] });
  expect(statuses[1]).toMatchObject({ name: 'other', state: 'error', tools: ['connection__other__echo'], missing: ['the server does not offer the allowlisted tool "missing"'] });
  expect(statuses[2]).toMatchObject({ name: 'dead', state: 'error', tools: [] });
  expect(statuses[2]!.missing[0]).toMatch(/^the server is unavailable: /);
  expect(registry.describeTools()).toEqual([
    { name: 'connection__my-server__echo', description: 'Echo', inputSchema: expect.objectContaining({ type: 'object' }) },
    { name: 'connection__other__echo', description: 'Echo', inputSchema: expect.objectContaining({ type: 'object' }) },
  ]);

  // Server `a` with tool `b__echo` and server `a__b` with tool `echo` are both `mcp__a__b__echo` to Flue.
  const clashing = new ConnectionRegistry(
    [defineFlueConnection({ name: 'a', url: `${server.url}/mcp/b__echo` }), defineFlueConnection({ name: 'a__b', url: `${server.url}/mcp/echo` })],
    (definition) => flueMountFor(definition).fetch,
  );
  const [first, second] = await clashing.refresh();
  expect(first).toMatchObject({ state: 'ready', tools: ['connection__a__b__echo'] });
  expect(second).toMatchObject({ state: 'error', tools: [] });
  expect(second!.missing).toEqual([expect.stringMatching(/"b__echo" from connection "a" and "echo" from connection "a__b" both become mcp__a__b__echo/)]);
  expect(clashing.mountable().map((d) => d.name)).toEqual(['a']);
});

test('a server that lists its tools only to signed-in callers needs a sign-in, and shows its tools once one is granted', async () => {
  const definition = defineFlueConnection({ name: 'locked', url: `${server.url}/locked/mcp/echo`, auth: { type: 'oauth2' } });
  const registry = new ConnectionRegistry([definition], (d) => flueMountFor(d).fetch);
  expect(await registry.refresh()).toEqual([
    { name: 'locked', state: 'needs_sign_in', tools: [], missing: ['sign in: the server lists its tools only to signed-in callers'] },
  ]);
  // Eve names even before the relist: a Flue name never reaches a client.
  expect(registry.names.toEve('mcp__locked__echo')).toBe('connection__locked__echo');
  await registry.relist('locked', flueMountFor(definition, { authorizer: fixedTokenAuthorizer('letmein') }).fetch);
  expect(registry.status()).toEqual([{ name: 'locked', state: 'ready', tools: ['connection__locked__echo'], missing: [] }]);
  expect(registry.names.toEve('mcp__locked__echo')).toBe('connection__locked__echo');
});

test('status lines tell a needed sign-in from a refused or a missing credential', async () => {
  const url = `${server.url}/locked/mcp/echo`;
  const definitions = [
    defineFlueConnection({ name: 'bare', url }),
    defineFlueConnection({ name: 'wrongkey', url, auth: { type: 'bearer', token: 'not-the-key' } }),
    defineFlueConnection({ name: 'rightkey', url, auth: { type: 'bearer', token: () => 'letmein' } }),
  ];
  const registry = new ConnectionRegistry(definitions, (d) => flueMountFor(d).fetch);
  const statuses = await registry.refresh();
  expect(statuses.map(({ name, state, missing }) => ({ name, state, missing }))).toEqual([
    { name: 'bare', state: 'error', missing: ['the server wants a credential and the definition has none: add `auth` (bearer or oauth2) or `headers`'] },
    { name: 'wrongkey', state: 'error', missing: ['the server refused the connection’s credential (HTTP 401): check `auth` or `headers`'] },
    { name: 'rightkey', state: 'ready', missing: [] },
  ]);
  expect(JSON.stringify(statuses)).not.toContain('letmein');
});
