import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { SignInError } from './backend.ts';

/** What kind of network an address is on. */
export type NetworkKind = 'public' | 'loopback' | 'private' | 'link-local';

const RANGES: Record<Exclude<NetworkKind, 'public'>, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  private: [
    ['0.0.0.0', 8, 'ipv4'],
    ['10.0.0.0', 8, 'ipv4'],
    ['100.64.0.0', 10, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['198.18.0.0', 15, 'ipv4'],
    ['224.0.0.0', 3, 'ipv4'],
    ['::', 128, 'ipv6'],
    ['fc00::', 7, 'ipv6'],
    ['ff00::', 8, 'ipv6'],
  ],
};

const LISTS = Object.entries(RANGES).map(([kind, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return [kind as NetworkKind, list] as const;
});

export function networkKind(address: string): NetworkKind {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address;
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  return LISTS.find(([, list]) => list.check(plain, family))?.[0] ?? 'public';
}

/** Resolves a URL's host the way a connection would (every address it has). */
export type Resolve = (hostname: string) => Promise<string[]>;

const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface OutboundPolicy {
  /** The MCP server's own URL: a server on a private network may sign in on that same kind of network. */
  connectionUrl: string;
  /** Allow every address (`auth.allowPrivateNetwork`). */
  allowPrivateNetwork?: boolean;
  resolve?: Resolve;
}

const MAX_REDIRECTS = 5;

/**
 * A fetch for sign-in traffic (discovery, protected-resource metadata, registration, token,
 * revocation) that refuses hosts resolving to loopback, private or link-local addresses, unless
 * the connection's own host is on that kind of network (local development) or the connection
 * allows private networks. Redirects are followed by hand so that every hop is checked.
 */
export function guardedFetch(policy: OutboundPolicy, base: typeof fetch = (input, init) => globalThis.fetch(input, init)): typeof fetch {
  if (policy.allowPrivateNetwork) return base;
  const resolve = policy.resolve ?? systemResolve;
  let own: Promise<Set<NetworkKind>> | undefined;
  const allowed = () => (own ??= kindsOf(new URL(policy.connectionUrl).hostname, resolve).then((kinds) => new Set<NetworkKind>(['public', ...kinds])));

  async function check(url: URL): Promise<void> {
    const kinds = await kindsOf(url.hostname, resolve);
    const permitted = await allowed();
    const refused = [...kinds].find((kind) => !permitted.has(kind));
    if (refused) {
      throw new SignInError('failed', `refused to contact ${url.host}: it is a ${refused} address (set auth.allowPrivateNetwork to allow it)`);
    }
  }

  return async (input, init) => {
    let request = new Request(input, init);
    for (let hop = 0; ; hop++) {
      await check(new URL(request.url));
      const response = await base(request, { redirect: 'manual' });
      const location = response.headers.get('location');
      const followable = request.redirect === 'follow' && (request.method === 'GET' || request.method === 'HEAD');
      if (!followable || response.status < 300 || response.status > 399 || location === null) return response;
      if (hop >= MAX_REDIRECTS) throw new SignInError('failed', `too many redirects from ${new URL(request.url).host}`);
      await response.body?.cancel();
      request = new Request(new URL(location, request.url), { method: request.method, headers: request.headers, signal: request.signal });
    }
  };
}

async function kindsOf(hostname: string, resolve: Resolve): Promise<Set<NetworkKind>> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return new Set([networkKind(bare)]);
  let addresses: string[];
  try {
    addresses = await resolve(bare);
  } catch {
    throw new SignInError('failed', `cannot resolve ${hostname}`);
  }
  return new Set(addresses.map(networkKind));
}
