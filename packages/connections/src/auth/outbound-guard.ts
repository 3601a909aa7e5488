import { lookup as systemLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { SignInError } from './backend.ts';
import { networkKind, type NetworkKind } from './network-kind.ts';

export { networkKind, type NetworkKind } from './network-kind.ts';

/** Resolves a host name the way a connection would (every address it has). */
export type Resolve = (hostname: string) => Promise<string[]>;

const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true, order: 'verbatim' }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((a) => a.address))));
  });

export interface OutboundPolicy {
  /** The MCP server's own URL: a server on a private network may sign in on that same kind of network. */
  connectionUrl: string;
  /** Allow every address (`auth.allowPrivateNetwork`). */
  allowPrivateNetwork?: boolean;
  resolve?: Resolve;
}

const MAX_REDIRECTS = 5;

type Check = (hostname: string, kinds: Set<NetworkKind>) => Promise<void>;

/**
 * A fetch for sign-in traffic (discovery, protected-resource metadata, registration, token,
 * revocation) that refuses loopback, private and link-local addresses, unless the connection's
 * own host is on that kind of network (local development) or the connection allows private
 * networks. The check is made on the addresses the socket connects to (the agent's DNS lookup),
 * so a name cannot resolve to a public address for a check and a private one for the
 * connection. Redirects are followed by hand so that every hop is checked. A `base` fetch (a
 * transport whose connections the guard cannot see) has each host checked before the request.
 */
export function guardedFetch(policy: OutboundPolicy, base?: typeof fetch): typeof fetch {
  if (policy.allowPrivateNetwork) return base ?? ((input, init) => globalThis.fetch(input, init));
  const resolve = policy.resolve ?? systemResolve;
  let own: Promise<Set<NetworkKind>> | undefined;
  const allowed = () => (own ??= kindsOf(new URL(policy.connectionUrl).hostname, resolve).then((kinds) => new Set<NetworkKind>(['public', ...kinds])));
  const check: Check = async (host, kinds) => {
    const permitted = await allowed();
    const refused = [...kinds].find((kind) => !permitted.has(kind));
    if (refused) throw new SignInError('failed', `refused to contact ${host}: it is a ${refused} address (set auth.allowPrivateNetwork to allow it)`);
  };
  const send = base ?? pinnedFetch(resolve, check);

  return async (input, init) => {
    let request = new Request(input, init);
    for (let hop = 0; ; hop++) {
      const url = new URL(request.url);
      // A literal address is never looked up: check it here. Names are checked as they are connected to.
      const literal = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(literal)) await check(url.host, new Set([networkKind(literal)]));
      else if (base) await check(url.host, await kindsOf(url.hostname, resolve));
      const response = await send(request, { redirect: 'manual' });
      const location = response.headers.get('location');
      const followable = request.redirect === 'follow' && (request.method === 'GET' || request.method === 'HEAD');
      if (!followable || response.status < 300 || response.status > 399 || location === null) return response;
      if (hop >= MAX_REDIRECTS) throw new SignInError('failed', `too many redirects from ${url.host}`);
      await response.body?.cancel();
      request = new Request(new URL(location, request.url), { method: request.method, headers: request.headers, signal: request.signal });
    }
  };
}

/**
 * Requests through an undici agent whose DNS lookup refuses what `check` refuses: the addresses
 * checked are the ones the socket is given. Answers are rebuilt as the platform's `Response`.
 */
function pinnedFetch(resolve: Resolve, check: Check): typeof fetch {
  const lookup = (hostname: string, options: LookupOptions, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    resolve(hostname)
      .then(async (addresses) => {
        if (addresses.length === 0) throw new SignInError('failed', `cannot resolve ${hostname}`);
        await check(hostname, new Set(addresses.map(networkKind)));
        const entries = addresses.map((address) => ({ address, family: isIP(address) })).filter((a) => !options.family || a.family === options.family);
        if (entries.length === 0) throw new SignInError('failed', `cannot resolve ${hostname}`);
        if (options.all) callback(null, entries);
        else callback(null, entries[0]!.address, entries[0]!.family);
      })
      .catch((error: unknown) => callback(error instanceof SignInError ? error : new SignInError('failed', `cannot resolve ${hostname}`), ''));
  };
  const dispatcher = new Agent({ connect: { lookup }, keepAliveTimeout: 1_000 });
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? await request.arrayBuffer() : undefined;
    let answer;
    try {
      answer = await undiciFetch(request.url, {
        method: request.method,
        headers: [...request.headers],
        redirect: 'manual',
        signal: request.signal,
        dispatcher,
        ...(body !== undefined ? { body } : {}),
      });
    } catch (error) {
      // undici wraps the lookup's refusal in "fetch failed": the refusal is the answer.
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof SignInError ? cause : error;
    }
    const nullBody = answer.status === 204 || answer.status === 304 || request.method === 'HEAD';
    return new Response(nullBody ? null : (answer.body as ReadableStream<Uint8Array> | null), { status: answer.status, statusText: answer.statusText, headers: [...answer.headers] });
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
