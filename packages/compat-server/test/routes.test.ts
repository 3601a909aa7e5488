import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { bearerTokens, createCompatServer, MemoryJournal, type CompatServer } from '@eve-flue/compat-server';
import { ScriptedRuntime } from '../../../test/support/scripted-runtime.ts';

let server: CompatServer;

beforeAll(async () => {
  server = await createCompatServer({
    runtime: new ScriptedRuntime(),
    journal: new MemoryJournal(),
    mode: 'development',
    uploads: { maxBytes: 1024, allowedMediaTypes: ['image/*', 'text/plain'] },
  });
});

afterAll(async () => {
  await server.close();
});

const createSession = async (): Promise<string> => (await request(server.app).post('/eve/v1/session').expect(202)).body.sessionId;

function expectError(response: request.Response, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ ok: false, code, error: expect.any(String) });
}

describe('bad input gets a 4xx in Eve’s error shape', () => {
  test('malformed JSON', async () => {
    const response = await request(server.app).post('/eve/v1/session').set('content-type', 'application/json').send('{"message":');
    expectError(response, 400, 'invalid_json');
  });

  test('a body that is not JSON', async () => {
    const response = await request(server.app).post('/eve/v1/session').set('content-type', 'text/plain').send('hello');
    expectError(response, 415, 'unsupported_media_type');
  });

  test.each([
    ['a number message', { message: 42 }],
    ['an empty message', { message: '   ' }],
    ['an empty parts list', { message: [] }],
    ['an unknown part type', { message: [{ type: 'video', data: 'x' }] }],
    ['a JSON array body', [1, 2]],
    ['an operationId that is not a string', { message: 'hi', operationId: 7 }],
  ])('create with %s', async (_name, body) => {
    expectError(await request(server.app).post('/eve/v1/session').send(body as object), 400, 'invalid_request');
  });

  test("an operationId from an anonymous caller in development is Eve's local-dev caller's: a retry gets the same session", async () => {
    const first = await request(server.app).post('/eve/v1/session').send({ message: 'hi', operationId: 'op-anonymous' }).expect(202);
    const again = await request(server.app).post('/eve/v1/session').send({ message: 'hi', operationId: 'op-anonymous' }).expect(202);
    expect(again.body.sessionId).toBe(first.body.sessionId);
  });

  test.each([
    ['neither message nor inputResponses', {}],
    ['both message and inputResponses', { message: 'hi', inputResponses: [{ requestId: 'req_1', optionId: 'approve' }] }],
    ['empty inputResponses', { inputResponses: [] }],
    ['an inputResponse with an unknown key', { inputResponses: [{ requestId: 'req_1', extra: true }] }],
    ['an unknown turnPolicy', { message: 'hi', turnPolicy: 'interrupt' }],
  ])('a follow-up with %s', async (_name, body) => {
    const sessionId = await createSession();
    expectError(await request(server.app).post(`/eve/v1/session/${sessionId}`).send(body), 400, 'invalid_request');
  });

  test('a follow-up to an unknown session', async () => {
    expectError(await request(server.app).post('/eve/v1/session/ses_nope').send({ message: 'hi' }), 409, 'session_not_active');
  });

  test('inputResponses that answer nothing open', async () => {
    const sessionId = await createSession();
    const response = await request(server.app)
      .post(`/eve/v1/session/${sessionId}`)
      .send({ inputResponses: [{ requestId: 'req_unknown', optionId: 'approve' }] });
    expectError(response, 409, 'unknown_input_request');
  });

  test.each(['abc', '1.5', '', '1e3', '99999999999999999999'])('startIndex=%s', async (startIndex) => {
    const sessionId = await createSession();
    expectError(await request(server.app).get(`/eve/v1/session/${sessionId}/stream`).query({ startIndex }), 400, 'invalid_request');
  });

  test('a stream of an unknown session', async () => {
    expectError(await request(server.app).get('/eve/v1/session/ses_nope/stream'), 404, 'session_not_found');
  });

  test('a body over the size limit', async () => {
    const response = await request(server.app).post('/eve/v1/session').send({ message: 'x'.repeat(3 * 1024 * 1024) });
    expectError(response, 413, 'payload_too_large');
  });

  test('an inline file over the upload cap', async () => {
    const data = Buffer.alloc(2048).toString('base64');
    const response = await request(server.app).post('/eve/v1/session').send({ message: [{ type: 'file', mediaType: 'text/plain', data }] });
    expectError(response, 413, 'payload_too_large');
  });

  test('a file type the policy refuses', async () => {
    const response = await request(server.app)
      .post('/eve/v1/session')
      .send({ message: [{ type: 'file', mediaType: 'application/pdf', data: 'data:application/pdf;base64,JVBERi0=' }] });
    expectError(response, 415, 'unsupported_media_type');
  });

  test('a data: URL with a broken percent-encoding', async () => {
    const response = await request(server.app).post('/eve/v1/session').send({ message: [{ type: 'file', mediaType: 'text/plain', data: 'data:text/plain,%zz' }] });
    expectError(response, 400, 'invalid_request');
  });

  test('file data that is neither base64 nor a URL', async () => {
    const response = await request(server.app).post('/eve/v1/session').send({ message: [{ type: 'file', mediaType: 'text/plain', data: '%%%' }] });
    expectError(response, 400, 'invalid_request');
  });

  test('an unknown route', async () => {
    expectError(await request(server.app).get('/eve/v1/nothing-here'), 404, 'not_found');
  });

  test('cancel with a bad turnId type', async () => {
    const sessionId = await createSession();
    expectError(await request(server.app).post(`/eve/v1/session/${sessionId}/cancel`).send({ turnId: 3 }), 400, 'invalid_request');
  });
});

describe('good input', () => {
  test('an empty JSON body on a control route is accepted', async () => {
    const sessionId = await createSession();
    const response = await request(server.app).post(`/eve/v1/session/${sessionId}/compact`).set('content-type', 'application/json');
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ ok: true, status: 'accepted', sessionId });
  });

  test('a file part is recorded by type, name and size, never by its bytes', async () => {
    const data = Buffer.from('hello file').toString('base64');
    const created = await request(server.app)
      .post('/eve/v1/session')
      .send({ message: [{ type: 'text', text: 'see file' }, { type: 'file', mediaType: 'text/plain', filename: 'a.txt', data }] })
      .expect(202);
    const body = (await request(server.app).get(`/eve/v1/session/${created.body.sessionId}/stream`).query({ follow: 'false' })).text;
    expect(body).toContain('"parts":[{"type":"text","text":"see file"},{"type":"file","mediaType":"text/plain","filename":"a.txt","size":10}]');
    expect(body).not.toContain(data);
  });

  test('cancel and controls on unknown sessions answer with their "nothing to do" statuses', async () => {
    expect((await request(server.app).post('/eve/v1/session/ses_nope/cancel').send({})).body).toEqual({ ok: true, status: 'no_active_turn' });
    expect((await request(server.app).post('/eve/v1/session/ses_nope/clear').set('content-type', 'application/json')).body).toEqual({ ok: true, status: 'no_active_session' });
    expect((await request(server.app).post('/eve/v1/session/ses_nope/reset').send({})).body).toEqual({ ok: true, status: 'no_active_session' });
  });
});

describe('route auth', () => {
  test('production mode refuses to start without route auth', async () => {
    await expect(createCompatServer({ runtime: new ScriptedRuntime(), journal: new MemoryJournal(), mode: 'production' })).rejects.toThrow(
      /production mode without route auth/,
    );
  });

  test('bearer tokens guard every route but health', async () => {
    const guarded = await createCompatServer({
      runtime: new ScriptedRuntime(),
      journal: new MemoryJournal(),
      mode: 'production',
      auth: bearerTokens({ 'test-token-0123456789': 'tester' }),
    });
    try {
      await request(guarded.app).get('/eve/v1/health').expect(200);
      expectError(await request(guarded.app).get('/eve/v1/info'), 401, 'unauthorized');
      expectError(await request(guarded.app).post('/eve/v1/session').set('authorization', 'Bearer wrong-token-0000000'), 401, 'unauthorized');
      await request(guarded.app).post('/eve/v1/session').set('authorization', 'Bearer test-token-0123456789').expect(202);
    } finally {
      await guarded.close();
    }
  });

  test('short static tokens are refused at configuration time', () => {
    expect(() => bearerTokens({ short: 'x' })).toThrow(/at least 16 characters/);
  });
});

describe('CORS', () => {
  test('is off by default and, when on, exposes the headers the client reads', async () => {
    const plain = await request(server.app).get('/eve/v1/health').set('origin', 'https://app.example');
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    const open = await createCompatServer({ runtime: new ScriptedRuntime(), journal: new MemoryJournal(), mode: 'development', cors: true });
    try {
      const response = await request(open.app).get('/eve/v1/health').set('origin', 'https://app.example');
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-expose-headers']).toBe('x-eve-session-id,x-eve-stream-version,x-eve-stream-tail-index');
    } finally {
      await open.close();
    }
  });
});

describe('limits on what a caller sends', () => {
  let limited: CompatServer;
  beforeAll(async () => {
    limited = await createCompatServer({
      runtime: new ScriptedRuntime(),
      journal: new MemoryJournal(),
      mode: 'development',
      uploads: { maxBytes: 3000 },
      limits: { maxTextBytes: 1000, maxParts: 3, maxDepth: 8 },
    });
  });
  afterAll(async () => {
    await limited.close();
  });
  const post = (body: unknown) => request(limited.app).post('/eve/v1/session').set('content-type', 'application/json').send(JSON.stringify(body));

  test('text per message: at the limit accepted, one byte over 413 (bytes of UTF-8, not characters)', async () => {
    await post({ message: 'a'.repeat(1000) }).expect(202);
    expectError(await post({ message: 'a'.repeat(1001) }), 413, 'payload_too_large');
    expectError(await post({ message: 'é'.repeat(501) }), 413, 'payload_too_large');
    expectError(await post({ message: [{ type: 'text', text: 'a'.repeat(600) }, { type: 'text', text: 'a'.repeat(600) }] }), 413, 'payload_too_large');
  });

  test('parts per message', async () => {
    await post({ message: Array.from({ length: 3 }, () => ({ type: 'text', text: 'x' })) }).expect(202);
    expectError(await post({ message: Array.from({ length: 4 }, () => ({ type: 'text', text: 'x' })) }), 400, 'invalid_request');
  });

  test('nesting depth', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 9; i++) deep = [deep];
    expectError(await post({ message: 'hi', clientContext: { deep } }), 400, 'invalid_request');
    // Brackets inside strings do not count.
    await post({ message: '[[[[[[[[[[[[{{{{{{{{{{', clientContext: { a: { b: 'c' } } }).expect(202);
  });

  test('body size: the file cap as base64 plus the text limit plus 64 KiB; over it 413 from content-length alone', async () => {
    const file = Buffer.alloc(3000, 1).toString('base64');
    await post({ message: [{ type: 'text', text: 'see' }, { type: 'file', mediaType: 'text/plain', data: file }] }).expect(202);
    expectError(await post({ message: 'x', pad: 'p'.repeat(4000 + 1000 + 64 * 1024) }), 413, 'payload_too_large');
  });

  test('input-response texts count like message text', async () => {
    const sessionId = (await post({}).expect(202)).body.sessionId;
    const response = await request(limited.app)
      .post(`/eve/v1/session/${sessionId}`)
      .set('content-type', 'application/json')
      .send({ inputResponses: [{ requestId: 'req_1', text: 'a'.repeat(1001) }] });
    expectError(response, 413, 'payload_too_large');
  });

  test('a text message is journaled once: `message` alone, no text parts', async () => {
    const sessionId = (await post({ message: 'only-once-marker' }).expect(202)).body.sessionId;
    const stream = await request(limited.app).get(`/eve/v1/session/${sessionId}/stream`).query({ follow: 'false' });
    const received = stream.text.split('\n').filter((line) => line.includes('"message.received"'));
    expect(received).toHaveLength(1);
    expect(received[0]!.split('only-once-marker')).toHaveLength(2);
  });
});

describe('malformed requests are 4xx in Eve’s shape, never a 500', () => {
  test.each([
    ['a stream with bad percent-encoding', (app: CompatServer['app']) => request(app).get('/eve/v1/session/%ff/stream')],
    ['a follow-up with bad percent-encoding', (app: CompatServer['app']) => request(app).post('/eve/v1/session/%E0%A4%A/cancel').set('content-type', 'application/json')],
    [
      'a corrupt gzip body',
      (app: CompatServer['app']) =>
        request(app).post('/eve/v1/session').set('content-type', 'application/json').set('content-encoding', 'gzip').send(Buffer.from('not gzip at all')),
    ],
    [
      'a content-encoding named after a prototype key',
      (app: CompatServer['app']) => request(app).post('/eve/v1/session').set('content-type', 'application/json').set('content-encoding', 'constructor').send('{}'),
    ],
  ])('%s', async (_name, send) => {
    const response = await send(server.app);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.body).toEqual({ ok: false, code: expect.any(String), error: expect.any(String) });
  });

  test('POSTs must say application/json; a bodyless control only from no cross-site page; a bare create (prewarm) is allowed', async () => {
    const sessionId = await createSession();
    for (const control of ['cancel', 'clear', 'compact']) {
      const path = `/eve/v1/session/${sessionId}/${control}`;
      expectError(await request(server.app).post(path).set('sec-fetch-site', 'cross-site'), 415, 'unsupported_media_type');
      expectError(await request(server.app).post(path).set('sec-fetch-site', 'same-site'), 415, 'unsupported_media_type');
      expectError(await request(server.app).post(path).set('origin', 'https://elsewhere.example'), 415, 'unsupported_media_type');
      expectError(await request(server.app).post(path).set('content-type', 'text/plain'), 415, 'unsupported_media_type');
      // A server-side caller (an Eve parent cancelling its remote child) and a same-origin page are served.
      expect((await request(server.app).post(path)).status).toBeLessThan(300);
      expect((await request(server.app).post(path).set('sec-fetch-site', 'same-origin').set('origin', 'http://127.0.0.1')).status).toBeLessThan(300);
    }
    expectError(await request(server.app).post(`/eve/v1/session/${sessionId}`).set('content-type', 'text/plain').send('{"message":"hi"}'), 415, 'unsupported_media_type');
    expectError(await request(server.app).post('/eve/v1/session').set('content-type', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    await request(server.app).post('/eve/v1/session').expect(202);
  });
});

describe('Host allowlist', () => {
  test('only the public host (and loopback names when bound to loopback) is served', async () => {
    const pinned = await createCompatServer({
      runtime: new ScriptedRuntime(),
      journal: new MemoryJournal(),
      mode: 'development',
      site: { publicUrl: 'https://agent.example.com', loopbackPort: 3440 },
    });
    try {
      for (const host of ['agent.example.com', 'AGENT.example.com:443', 'localhost:3440', '127.0.0.1:3440', '[::1]:3440']) {
        await request(pinned.app).get('/eve/v1/health').set('host', host).expect(200);
      }
      for (const host of ['evil.example', 'agent.example.com.evil.example', '10.0.0.5:3440', '']) {
        expectError(await request(pinned.app).get('/eve/v1/health').set('host', host), 421, 'misdirected_request');
        expectError(await request(pinned.app).post('/eve/v1/session').set('host', host), 421, 'misdirected_request');
      }
    } finally {
      await pinned.close();
    }
  });
});
