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
