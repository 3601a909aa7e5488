import { describe, expect, test } from '@jest/globals';
import { guardedFetch, networkKind, type Resolve } from '../src/auth/outbound-guard.ts';

/** Names resolved as a DNS server would answer them; the guard sees only addresses. */
const dns: Record<string, string[]> = {
  'mcp.example.com': ['93.184.216.34'],
  'login.example.com': ['93.184.216.35'],
  'rebound.example.com': ['93.184.216.36', '10.1.2.3'],
  'metadata.example.com': ['169.254.169.254'],
  'intranet.example.com': ['fd12::7'],
  'dev.internal': ['192.168.1.20'],
};
const resolve: Resolve = async (name) => {
  const addresses = dns[name];
  if (!addresses) throw new Error('ENOTFOUND');
  return addresses;
};

/** The network, as seen from the guard: every URL it was asked to reach, and a redirect table. */
function network(redirects: Record<string, string> = {}) {
  const reached: string[] = [];
  const base: typeof fetch = async (input) => {
    const url = input instanceof Request ? input.url : String(input);
    reached.push(url);
    const to = redirects[url];
    return to ? new Response(null, { status: 302, headers: { location: to } }) : Response.json({ ok: true });
  };
  return { base, reached };
}

describe('address kinds', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.0.0.1', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['fd00::1', 'private'],
    ['0.0.0.0', 'private'],
    ['93.184.216.34', 'public'],
    ['2606:4700::1111', 'public'],
    // IPv6 forms that carry an IPv4 address are the kind of the address they carry.
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::5db8:d822', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::a00:1', 'private'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['100.64.0.1', 'private'],
    ['198.51.100.7', 'private'],
    ['2001:db8::1', 'private'],
    ['not an address', 'private'],
  ])('%s is %s', (address, kind) => {
    expect(networkKind(address)).toBe(kind);
  });
});

describe('a connection on the public internet', () => {
  const policy = { connectionUrl: 'https://mcp.example.com/mcp', resolve };

  test('reaches public hosts', async () => {
    const { base, reached } = network();
    await guardedFetch(policy, base)('https://login.example.com/.well-known/openid-configuration');
    expect(reached).toEqual(['https://login.example.com/.well-known/openid-configuration']);
  });

  test.each([
    ['a literal link-local address (cloud metadata)', 'https://169.254.169.254/latest/meta-data', /link-local/],
    ['a name that resolves to link-local', 'https://metadata.example.com/', /link-local/],
    ['a name with one private address among public ones', 'https://rebound.example.com/token', /private/],
    ['a private IPv6 name', 'https://intranet.example.com/register', /private/],
    ['loopback', 'http://127.0.0.1:8080/admin', /loopback/],
    ['IPv6 loopback', 'http://[::1]:8080/admin', /loopback/],
  ])('refuses %s before connecting', async (_name, url, kind) => {
    const { base, reached } = network();
    await expect(guardedFetch(policy, base)(url)).rejects.toThrow(kind);
    expect(reached).toEqual([]);
  });

  test('checks every redirect hop', async () => {
    const { base, reached } = network({ 'https://login.example.com/start': 'https://metadata.example.com/steal' });
    await expect(guardedFetch(policy, base)('https://login.example.com/start')).rejects.toThrow(/link-local/);
    expect(reached).toEqual(['https://login.example.com/start']);
  });

  test('follows a redirect to a public host', async () => {
    const { base, reached } = network({ 'https://login.example.com/a': 'https://mcp.example.com/b' });
    const response = await guardedFetch(policy, base)('https://login.example.com/a');
    expect(response.status).toBe(200);
    expect(reached).toEqual(['https://login.example.com/a', 'https://mcp.example.com/b']);
  });

  test('a request that asked not to follow redirects gets the redirect itself', async () => {
    const { base } = network({ 'https://login.example.com/a': 'https://metadata.example.com/' });
    const response = await guardedFetch(policy, base)('https://login.example.com/a', { redirect: 'manual' });
    expect(response.status).toBe(302);
  });

  test('allowPrivateNetwork lets everything through', async () => {
    const { base, reached } = network();
    await guardedFetch({ ...policy, allowPrivateNetwork: true }, base)('https://169.254.169.254/');
    expect(reached).toEqual(['https://169.254.169.254/']);
  });
});

describe('a connection on a private network (local development)', () => {
  test('may sign in on its own kind of network, not on others', async () => {
    const { base, reached } = network();
    const onLan = guardedFetch({ connectionUrl: 'http://dev.internal:3000/mcp', resolve }, base);
    await onLan('http://192.168.1.21/token');
    expect(reached).toEqual(['http://192.168.1.21/token']);
    await expect(onLan('https://169.254.169.254/')).rejects.toThrow(/link-local/);
    await expect(onLan('http://127.0.0.1:9/')).rejects.toThrow(/loopback/);
  });

  test('a loopback connection may use loopback servers (the tests run this way)', async () => {
    const { base, reached } = network();
    const local = guardedFetch({ connectionUrl: 'http://127.0.0.1:4000/mcp', resolve }, base);
    await local('http://127.0.0.1:4001/.well-known/oauth-authorization-server');
    expect(reached).toHaveLength(1);
    await expect(local('https://10.0.0.8/token')).rejects.toThrow(/private/);
  });
});
