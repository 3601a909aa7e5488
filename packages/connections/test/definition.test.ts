import { describe, expect, test } from '@jest/globals';
import { defineFlueConnection, type FlueConnectionDefinition } from '@eve-flue/connections';

const ok: FlueConnectionDefinition = { name: 'demo', url: 'https://mcp.example.com/mcp' };

describe('defineFlueConnection', () => {
  test('freezes what it returns', () => {
    const defined = defineFlueConnection({ ...ok, tools: ['a'], auth: { type: 'oauth2', scopes: ['x'] } });
    expect(Object.isFrozen(defined)).toBe(true);
    expect(Object.isFrozen(defined.tools)).toBe(true);
    expect(Object.isFrozen(defined.auth!.scopes)).toBe(true);
  });

  test.each([
    [{ ...ok, colour: 'blue' }, '`colour` is not a connection field'],
    [{ ...ok, name: 'my server' }, '`name` must be letters'],
    [{ ...ok, name: 'eve' }, 'reserved by Eve'],
    [{ ...ok, url: 'not a url' }, '`url` is not a valid URL'],
    [{ ...ok, url: 'ftp://x/mcp' }, '`url` must use https'],
    [{ ...ok, url: 'https://user:pw@x/mcp' }, 'may not embed credentials'],
    [{ ...ok, tools: ['a', 'a'] }, '`tools` lists a tool twice'],
    [{ ...ok, headers: { Authorization: 'Bearer x' } }, '`headers.Authorization` may not carry credentials'],
    [{ ...ok, timeoutMs: -1 }, '`timeoutMs` must be a positive'],
    [{ ...ok, auth: { type: 'oauth1' } }, '`auth.type` must be "oauth2"'],
    [{ ...ok, auth: { type: 'oauth2', clientSecret: 's' } }, '`auth.clientSecret` needs `auth.clientId`'],
    [{ ...ok, auth: { type: 'oauth2', clientId: 'c', tokenUrl: 'https://t' } }, '`auth.authorizationUrl` and `auth.tokenUrl` go together'],
    [{ ...ok, auth: { type: 'oauth2', grant: 'x' } }, '`auth.grant` is not an OAuth setting'],
  ])('refuses %j', (definition, message) => {
    expect(() => defineFlueConnection(definition as FlueConnectionDefinition)).toThrow(message);
  });
});
