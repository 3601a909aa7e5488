import { expect, test } from '@jest/globals';
import { createUpstreamFetch } from '@eve-flue/connections';

test('the upstream fetch drops caller credentials and cookies both ways, and retries a 401 once with the authorizer’s token', async () => {
  const seen: Headers[] = [];
  const upstream: typeof fetch = async (_input, init) => {
    const headers = new Headers(init?.headers);
    seen.push(headers);
    const authorized = headers.get('authorization') === 'Bearer fresh';
    return new Response('{}', { status: authorized ? 200 : 401, headers: { 'set-cookie': 'upstream=1', 'content-type': 'application/json' } });
  };
  const send = createUpstreamFetch({
    fetch: upstream,
    timeoutMs: 1_000,
    headers: async () => ({ 'x-team': 'blue' }),
    authorizer: {
      token: async () => 'stale',
      unauthorized: async ({ sentToken, call }) => {
        expect(sentToken).toBe('stale');
        expect(call).toEqual({ id: 7, method: 'tools/call', toolName: 'whoami' });
        return { retryWith: 'fresh' };
      },
    },
  });
  const response = await send('https://mcp.example/mcp', {
    method: 'POST',
    headers: { authorization: 'Bearer caller', cookie: 'sid=caller', 'proxy-authorization': 'Basic x', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'whoami' } }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('set-cookie')).toBeNull();
  expect(seen.map((h) => h.get('authorization'))).toEqual(['Bearer stale', 'Bearer fresh']);
  for (const headers of seen) {
    expect(headers.get('cookie')).toBeNull();
    expect(headers.get('proxy-authorization')).toBeNull();
    expect(headers.get('x-team')).toBe('blue');
  }
});

test('the timeout bounds the wait for an answer’s headers, never a body that streams on (the standing GET stream)', async () => {
  const streaming: typeof fetch = async (_input, init) => {
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      // The upstream sends one event now and more after the timeout has long passed.
      async pull(controller) {
        if (step++ === 3) return controller.close();
        if (step > 1) await new Promise((resolve) => setTimeout(resolve, 60));
        if (init?.signal?.aborted) return controller.error(init.signal.reason);
        controller.enqueue(new TextEncoder().encode(`data: ${step}\n\n`));
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  const send = createUpstreamFetch({ fetch: streaming, timeoutMs: 20 });
  const response = await send('https://mcp.example/mcp', { method: 'GET' });
  expect(await response.text()).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\n');

  const silent: typeof fetch = (_input, init) =>
    new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }));
  await expect(createUpstreamFetch({ fetch: silent, timeoutMs: 20 })('https://mcp.example/mcp', { method: 'POST', body: '{}' })).rejects.toThrow('The upstream request timed out.');
});
