import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch, type Resolve } from '../src/auth/outbound-guard.ts';

/** A sign-in server on loopback that records every request it gets. */
let server: Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    received.push(request.url ?? '');
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ issuer: 'https://login.rebind.test' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A DNS answer per call, in order (TTL 0): what a rebinding name server does. */
function answering(...answers: string[][]): Resolve & { calls: number } {
  const resolve = Object.assign(async (_hostname: string) => answers[Math.min(resolve.calls++, answers.length - 1)]!, { calls: 0 });
  return resolve;
}

describe('the guard checks the address it connects to (real sockets)', () => {
  test('a name answering a public address, then 127.0.0.1, gets no request to loopback', async () => {
    const before = received.length;
    const rebinding = answering(['93.184.216.34'], ['127.0.0.1']);
    // The connection is public; its own name has a resolver of its own, so every answer of the rebinding one goes to the sign-in host.
    const resolve: Resolve = async (hostname) => (hostname === 'mcp.rebind.test' ? ['93.184.216.34'] : rebinding(hostname));
    const fetchForSignIn = guardedFetch({ connectionUrl: 'https://mcp.rebind.test/mcp', resolve });
    // The public answer goes to a lookup made before the connection (where an unpinned guard checks);
    // the lookup the socket connects with gets 127.0.0.1, and is the one checked.
    expect(await rebinding('login.rebind.test')).toEqual(['93.184.216.34']);
    await expect(fetchForSignIn(`http://login.rebind.test:${port}/.well-known/openid-configuration`)).rejects.toThrow(/refused to contact login\.rebind\.test.*loopback/);
    await expect(fetchForSignIn(`http://login.rebind.test:${port}/token`, { method: 'POST', body: 'grant_type=authorization_code' })).rejects.toThrow(/loopback/);
    expect(received.length).toBe(before);
  });

  test('the same name answering loopback for a loopback connection does reach the server (the lookup is what connects)', async () => {
    const before = received.length;
    const resolve = answering(['127.0.0.1']);
    const fetchForSignIn = guardedFetch({ connectionUrl: 'http://mcp.local.test:4000/mcp', resolve });
    const response = await fetchForSignIn(`http://login.rebind.test:${port}/.well-known/openid-configuration`);
    // One lookup for the connection's own host, one for the socket: no separate check that could see another answer.
    expect(resolve.calls).toBe(2);
    expect(response).toBeInstanceOf(Response);
    expect(await response.json()).toEqual({ issuer: 'https://login.rebind.test' });
    expect(received.slice(before)).toEqual(['/.well-known/openid-configuration']);
  });
});
