import { describe, expect, test } from '@jest/globals';
import { credentialHeaders, defineFlueConnection, type FlueConnectionDefinition } from '@eve-flue/connections';

const ok: FlueConnectionDefinition = { name: 'demo', url: 'https://mcp.example.com/mcp' };

describe('defineFlueConnection', () => {
  test('freezes what it returns', () => {
    const defined = defineFlueConnection({ ...ok, tools: ['a'], auth: { type: 'oauth2', scopes: ['x'] } });
    expect(Object.isFrozen(defined)).toBe(true);
    expect(Object.isFrozen(defined.tools)).toBe(true);
    expect(Object.isFrozen(defined.auth!.type === 'oauth2' && defined.auth!.scopes)).toBe(true);
  });

  test.each([
    [{ ...ok, colour: 'blue' }, '`colour` is not a connection field'],
    [{ ...ok, name: 'my server' }, '`name` must be letters'],
    [{ ...ok, name: 'eve' }, 'reserved by Eve'],
    [{ ...ok, url: 'not a url' }, '`url` is not a valid URL'],
    [{ ...ok, url: 'ftp://x/mcp' }, '`url` must use https'],
    [{ ...ok, url: 'https://user:pw@x/mcp' }, 'may not embed credentials'],
    [{ ...ok, tools: ['a', 'a'] }, '`tools` lists a tool twice'],
    [{ ...ok, headers: { Authorization: 'Basic x' }, auth: { type: 'bearer', token: 't' } }, '`headers.Authorization` and `auth` both set Authorization'],
    [{ ...ok, headers: { 'bad header': 'x' } }, '`headers.bad header` is not a valid header name'],
    [{ ...ok, headers: { 'x-key': 42 } }, '`headers.x-key` must be a string or a function'],
    [{ ...ok, auth: { type: 'bearer' } }, '`auth.token` must be a non-empty string or a function'],
    [{ ...ok, auth: { type: 'bearer', token: 't', scopes: ['a'] } }, '`auth.scopes` is not a bearer setting'],
    [{ ...ok, requiresPrincipal: 'yes' }, '`requiresPrincipal` must be true or false'],
    [{ ...ok, approval: 'sometimes' }, '`approval` must be "never", "always" or a function'],
    [{ ...ok, timeoutMs: -1 }, '`timeoutMs` must be a positive'],
    [{ ...ok, auth: { type: 'oauth1' } }, '`auth.type` must be "oauth2" or "bearer"'],
    [{ ...ok, auth: { type: 'oauth2', clientSecret: 's' } }, '`auth.clientSecret` needs `auth.clientId`'],
    [{ ...ok, auth: { type: 'oauth2', clientId: 'c', tokenUrl: 'https://t' } }, '`auth.authorizationUrl` and `auth.tokenUrl` go together'],
    [{ ...ok, auth: { type: 'oauth2', grant: 'x' } }, '`auth.grant` is not an OAuth setting'],
  ])('refuses %j', (definition, message) => {
    expect(() => defineFlueConnection(definition as FlueConnectionDefinition)).toThrow(message);
  });

  test('takes bearer tokens and header values as strings or per-caller functions', () => {
    const token = ({ principal }: { principal?: string }) => `token-of-${principal}`;
    const defined = defineFlueConnection({ ...ok, auth: { type: 'bearer', token }, headers: { 'X-Tenant': () => 'blue', 'X-Static': 's' }, requiresPrincipal: true });
    expect(defined.auth).toEqual({ type: 'bearer', token });
    expect(defined.requiresPrincipal).toBe(true);
    expect(() => defineFlueConnection({ ...ok, headers: { Authorization: 'Basic abc' } })).not.toThrow();
  });
});

describe('credentialHeaders', () => {
  test('resolves functions per caller and sends no header for an empty value', async () => {
    const defined = defineFlueConnection({
      ...ok,
      auth: { type: 'bearer', token: async ({ principal }) => (principal ? `t-${principal}` : '') },
      headers: { 'X-Session': ({ sessionId }) => sessionId ?? '', 'X-Static': 's' },
    });
    expect(await credentialHeaders(defined, { principal: 'ann', sessionId: 'ses_1' })).toEqual({ authorization: 'Bearer t-ann', 'x-session': 'ses_1', 'x-static': 's' });
    expect(await credentialHeaders(defined, {})).toEqual({ 'x-static': 's' });
  });

  test('a failing resolver names the field, not the value', async () => {
    const defined = defineFlueConnection({ ...ok, auth: { type: 'bearer', token: () => { throw new Error('vault down: secret-123'); } } });
    await expect(credentialHeaders(defined, {})).rejects.toThrow('connection "demo": `auth.token` could not be resolved without a caller');
    await expect(credentialHeaders(defined, {})).rejects.not.toThrow('secret-123');
  });
});
