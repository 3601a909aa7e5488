/** Request headers that carry a caller's credentials: never forwarded anywhere. */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'cookie', 'proxy-authorization'];

/** Response headers that must not travel back towards the agent or a client. */
const STRIPPED_RESPONSE_HEADERS: readonly string[] = ['set-cookie', 'set-cookie2'];

export interface UpstreamFetchOptions {
  /** Static headers of the connection. */
  headers?: Readonly<Record<string, string>>;
  /** Longest wait for one upstream request. */
  timeoutMs: number;
  /** Resolves the credential to send, if any; called per request. */
  credential?: () => Promise<string | undefined>;
  fetch?: typeof fetch;
}

/**
 * A `fetch` for the agent's MCP traffic to one connection: drops any credential the agent side
 * sent, adds the connection's own headers and held token, bounds each request by its own
 * timeout, and strips cookies from the answer.
 */
export function createUpstreamFetch(options: UpstreamFetchOptions): typeof fetch {
  const send = options.fetch ?? fetch;
  return async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    for (const name of CREDENTIAL_HEADERS) headers.delete(name);
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    const token = await options.credential?.();
    if (token) headers.set('authorization', `Bearer ${token}`);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const response = await send(request.url, { method: request.method, headers, signal, redirect: 'manual', ...(body ? { body } : {}) });
    if (!STRIPPED_RESPONSE_HEADERS.some((name) => response.headers.has(name))) return response;
    const cleaned = new Headers(response.headers);
    for (const name of STRIPPED_RESPONSE_HEADERS) cleaned.delete(name);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: cleaned });
  };
}
