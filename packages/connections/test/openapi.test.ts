import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { defineOpenAPIConnection, type OpenAPIConnectionDefinition } from '@eve-flue/connections';
import { baseUrlOf, dereference, fetchDocument, parseDocument } from '../src/openapi/document.ts';
import { operationsOf } from '../src/openapi/operations.ts';
import { operationRequest, operationResult } from '../src/openapi/request.ts';

const doc = (paths: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths, ...extra });

describe('operations as tools (Eve’s rules)', () => {
  test('sanitized operationIds, derived names, 64 characters, duplicates numbered, only the seven methods', () => {
    const long = 'x'.repeat(70);
    const names = operationsOf(
      doc({
        '/pets/{petId}/photos': { get: {}, post: { operationId: '  create photo!!' }, trace: { operationId: 'traced' } },
        '/a': { get: { operationId: 'same' }, put: { operationId: 'same' }, post: { operationId: 'same' } },
        '/b': { get: { operationId: long }, put: { operationId: long } },
        '/c': { delete: { operationId: '__--' } },
      }),
    ).map((op) => op.toolName);
    expect(names).toEqual(['get_pets_petId_photos', 'create_photo', 'same', 'same_2', 'same_3', 'x'.repeat(64), `${'x'.repeat(62)}_2`, 'delete_c']);
  });

  test('path-level parameters merge with the operation’s (the operation’s wins); path parameters are required; body from JSON content', () => {
    const [op] = operationsOf(
      doc({
        '/items/{id}': {
          parameters: [
            { name: 'id', in: 'path', schema: { type: 'string' } },
            { name: 'v', in: 'query', schema: { type: 'string' }, description: 'path level' },
          ],
          patch: {
            operationId: 'patchItem',
            parameters: [
              { name: 'v', in: 'query', required: true, schema: { type: 'integer', default: 'one' } },
              { name: 'session', in: 'cookie', schema: { type: 'string' } },
            ],
            requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'object', nullable: true } } } },
          },
        },
      }),
    );
    expect(op!.inputSchema).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, v: { type: 'integer' }, session: { type: 'string' }, body: { type: ['object', 'null'] } },
      required: ['id', 'v', 'body'],
    });
    expect(op!.requestBody?.contentType).toBe('application/json');
  });

  test('Swagger 2.0: inline parameter schemas and the `in: body` parameter', async () => {
    const swagger = await dereference(
      {
        swagger: '2.0',
        info: { title: 't', version: '1' },
        definitions: { Pet: { type: 'object', properties: { name: { type: 'string' } } } },
        paths: { '/pets': { post: { operationId: 'add', parameters: [{ name: 'limit', in: 'query', type: 'integer', maximum: 5 }, { name: 'pet', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } }] } } },
      },
      'legacy',
    );
    const [op] = operationsOf(swagger);
    expect(op!.inputSchema).toEqual({ type: 'object', properties: { limit: { type: 'integer', maximum: 5 }, body: { type: 'object', properties: { name: { type: 'string' } } } }, required: ['body'] });
  });

  test('OpenAPI 3.1, a circular $ref becomes {}, an external one is never read', async () => {
    const api = await dereference(
      doc(
        { '/n': { get: { operationId: 'node', parameters: [{ name: 'q', in: 'query', schema: { $ref: '#/components/schemas/Node' } }] } } },
        { openapi: '3.1.0', components: { schemas: { Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node' } } } } } },
      ),
      'graph',
    );
    const [op] = operationsOf(api);
    expect(op!.inputSchema.properties).toEqual({ q: { type: 'object', properties: { next: {} } } });
    const external = doc({ '/x': { get: { parameters: [{ name: 'q', in: 'query', schema: { $ref: 'file:///etc/passwd' } }] } } });
    const [ext] = operationsOf(await dereference(external, 'ext'));
    expect(ext!.inputSchema.properties).toEqual({ q: {} });
  });
});

describe('one request', () => {
  const [op] = operationsOf(
    doc({
      '/a/{x}': {
        get: {
          operationId: 'get',
          parameters: [
            { name: 'x', in: 'path', schema: { type: 'string' } },
            { name: 'tag', in: 'query', schema: { type: 'array' } },
            { name: 'a', in: 'cookie' },
            { name: 'b', in: 'cookie' },
            { name: 'X-Trace', in: 'header' },
          ],
        },
      },
    }),
  );

  test('path values URL-encoded, query arrays repeated, cookies joined, headers set', () => {
    const request = operationRequest('c', 'https://api.example.com/v1/', op!, { x: 'a/b c', tag: ['1', '2'], a: 'x y', b: 2, 'X-Trace': 't' }, {});
    expect(request.url.href).toBe('https://api.example.com/v1/a/a%2Fb%20c?tag=1&tag=2');
    expect(request.headers).toEqual({ cookie: 'a=x%20y; b=2', 'x-trace': 't' });
  });

  test.each(['.', '..'])('refuses the path value %j', (x) => {
    expect(() => operationRequest('c', 'https://api.example.com', op!, { x }, {})).toThrow(`Path parameter "x" for tool "get" in connection "c" must not be "." or "..".`);
  });

  test.each([
    [{ type: 'http', scheme: 'basic' }, { authorization: 'Basic dTpw' }, ''],
    [{ type: 'apiKey', in: 'header', name: 'X-Key' }, { 'x-key': 'dTpw' }, ''],
    [{ type: 'apiKey', in: 'query', name: 'key' }, {}, '?key=dTpw'],
    [{ type: 'apiKey', in: 'cookie', name: 'k' }, { cookie: 'k=dTpw' }, ''],
    [{ type: 'oauth2', flows: {} }, { authorization: 'Bearer dTpw' }, ''],
  ])('puts a bearer token where the %j scheme says', (scheme, headers, search) => {
    const [secured] = operationsOf(doc({ '/s': { get: { operationId: 's' } } }, { components: { securitySchemes: { main: scheme } }, security: [{ main: [] }] }));
    const request = operationRequest('c', 'https://api.example.com', secured!, {}, { authorization: 'Bearer dTpw' });
    expect(request.headers).toEqual(headers);
    expect(request.url.search).toBe(search);
  });

  test('results: JSON parsed when the type says JSON, else text, null when empty', async () => {
    expect(await operationResult(Response.json({ a: 1 }, { status: 500, statusText: 'Boom' }))).toEqual({ status: 500, statusText: 'Boom', body: { a: 1 } });
    expect(await operationResult(new Response('{"a":1}', { headers: { 'content-type': 'text/plain' } }))).toEqual({ status: 200, statusText: '', body: '{"a":1}' });
    expect(await operationResult(new Response(null, { status: 204 }))).toEqual({ status: 204, statusText: '', body: null });
  });
});

describe('the document', () => {
  let server: Server;
  let origin: string;
  const seen: { url: string; authorization?: string; cookie?: string }[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ url: request.url!, ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}) });
      if (request.url === '/moved') return response.writeHead(302, { location: '/spec.yaml' }).end();
      if (request.url === '/away') return response.writeHead(302, { location: 'http://api.example.com/spec.json' }).end();
      if (request.url === '/spec.yaml') return response.writeHead(200, { 'content-type': 'application/yaml' }).end('openapi: 3.0.3\ninfo: { title: t, version: "1" }\nservers:\n  - url: /api\npaths: {}\n');
      response.writeHead(404).end();
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('YAML, after a redirect on loopback; relative servers against the spec URL', async () => {
    const spec = await fetchDocument(`${origin}/moved`, 'c', 5_000);
    expect(spec.openapi).toBe('3.0.3');
    expect(baseUrlOf(spec, `${origin}/moved`)).toBe(`${origin}/api`);
    expect(seen.every((s) => s.authorization === undefined)).toBe(true);
  });

  test('a redirect to plain http off loopback is refused before it is followed', async () => {
    await expect(fetchDocument(`${origin}/away`, 'c', 5_000)).rejects.toThrow('its spec URL must use https (http only on loopback), not http://api.example.com');
  });

  test('Swagger 2 base URLs; JSON before YAML', () => {
    expect(baseUrlOf({ swagger: '2.0', host: 'api.example.com', basePath: 'v2', schemes: ['http', 'https'] }, undefined)).toBe('http://api.example.com/v2');
    expect(baseUrlOf({ swagger: '2.0' }, 'https://docs.example.com/spec/swagger.json')).toBe('https://docs.example.com');
    expect(baseUrlOf({ servers: [{ url: 'https://{region}.example.com', variables: { region: { default: 'eu' } } }] }, undefined)).toBe('https://eu.example.com');
    expect(parseDocument('{"openapi":"3.1.0"}', 'c', 'x')).toEqual({ openapi: '3.1.0' });
    expect(() => parseDocument('- a list', 'c', 'x')).toThrow('is not an OpenAPI document');
  });
});

describe('defineOpenAPIConnection', () => {
  const ok: OpenAPIConnectionDefinition = { name: 'pets', spec: 'https://api.example.com/openapi.json' };

  test('a connection like any other: frozen, its url the base URL, its operations filter its tools', () => {
    const inline = defineOpenAPIConnection({ name: 'inline', spec: doc({}, { servers: [{ url: 'https://api.example.com/v1' }] }), operations: { allow: ['a'] } });
    expect(inline.url).toBe('https://api.example.com/v1');
    expect(inline.tools).toEqual({ allow: ['a'] });
    expect(Object.isFrozen(inline.openapi!.spec)).toBe(true);
    expect(defineOpenAPIConnection({ ...ok, baseUrl: 'https://api.example.com/v2' }).url).toBe('https://api.example.com/v2');
    expect(defineOpenAPIConnection(ok).url).toBe(ok.spec);
  });

  test.each([
    [{ ...ok, url: 'https://x' }, '`url` is not an OpenAPI connection field'],
    [{ ...ok, spec: 'http://api.example.com/openapi.json' }, '`spec` must use https (http only on loopback)'],
    [{ ...ok, spec: { paths: {} } }, '`spec` is not an OpenAPI 3.x or Swagger 2.0 document'],
    [{ ...ok, spec: doc({}) }, '`baseUrl` is needed'],
    [{ ...ok, baseUrl: 'ftp://x' }, '`baseUrl` must use https'],
    [{ ...ok, operations: ['a'] }, '`operations` must be `{ allow: [...] }` or `{ block: [...] }`'],
    [{ ...ok, operations: { allow: ['a'], block: ['b'] } }, '`operations` must be `{ allow: [...] }` or `{ block: [...] }` (exactly one)'],
    [{ ...ok, operations: { block: ['a', 'a'] } }, '`operations.block` lists a tool twice'],
    [{ ...ok, toolCall: { providedArguments: { k: () => 1 }, other: 1 } }, '`toolCall.other` is not a tool-call setting'],
    [{ ...ok, toolCall: { providedArguments: { k: undefined } } }, '`toolCall.providedArguments.k` must be a JSON value or a function'],
  ])('refuses %j', (definition, message) => {
    expect(() => defineOpenAPIConnection(definition as OpenAPIConnectionDefinition)).toThrow(message);
  });
});
