import { parseJsonRpcCall, type JsonRpcCall } from './json-rpc.ts';

/** Request headers that carry a caller's credentials: never forwarded anywhere. */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'cookie', 'proxy-authorization'];

/** Response headers that must not travel back towards the agent or a client. */
const STRIPPED_RESPONSE_HEADERS: readonly string[] = ['set-cookie', 'set-cookie2'];

/** Decides the credential of each upstream request, and what a 401 leads to. */
export interface UpstreamAuthorizer {
  token(): Promise<string | undefined>;
  /** Retry with another token (`''`: with none), or hand this answer back to the agent. */
  unauthorized(input: { response: Response; call: JsonRpcCall | undefined; sentToken: string | undefined }): Promise<
    { retryWith: string } | { answer: Response }
  >;
}

export interface UpstreamFetchOptions {
  /** The connection's own headers (credentials included) for this request, resolved per request. */
  headers?: () => Promise<Readonly<Record<string, string>>>;
  /** Longest wait for one upstream request. */
  timeoutMs: number;
  authorizer?: UpstreamAuthorizer;
  fetch?: typeof fetch;
  /** The tool call these requests serve, when they are not MCP traffic themselves (an OpenAPI operation). */
  call?: JsonRpcCall;
}

/**
 * A `fetch` for the agent's MCP traffic to one connection: drops any credential the agent side
 * sent, adds the connection's own headers and held token, bounds the wait for each upstream
 * answer by its own timeout (a sign-in in between is not counted), and strips cookies from the answer.
 */
export function createUpstreamFetch(options: UpstreamFetchOptions): typeof fetch {
  const send = options.fetch ?? fetch;
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const attempt = async (token: string | undefined): Promise<Response> => {
      const headers = new Headers(request.headers);
      for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      for (const [name, value] of Object.entries((await options.headers?.()) ?? {})) headers.set(name, value);
      if (token) headers.set('authorization', `Bearer ${token}`);
      // The timeout bounds the wait for the answer's headers, not its body: the standing GET
      // stream (server-to-client messages) stays open for as long as the session lives.
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException('The upstream request timed out.', 'TimeoutError')), options.timeoutMs);
      try {
        const signal = AbortSignal.any([request.signal, timeout.signal]);
        return await send(request.url, { method: request.method, headers, signal, redirect: 'manual', ...(body ? { body } : {}) });
      } finally {
        clearTimeout(timer);
      }
    };
    let token = await options.authorizer?.token();
    let response = await attempt(token);
    // At most two rounds: a rejected token (refreshed, or dropped to try without one), then a sign-in.
    for (let round = 0; response.status === 401 && options.authorizer && round < 2; round++) {
      const decision = await options.authorizer.unauthorized({ response, call: options.call ?? (body && parseJsonRpcCall(new TextDecoder().decode(body))), sentToken: token });
      if ('answer' in decision) {
        response = decision.answer;
        break;
      }
      token = decision.retryWith || undefined;
      response = await attempt(token);
    }
    return withoutCookies(response);
  };
}

function withoutCookies(response: Response): Response {
  if (!STRIPPED_RESPONSE_HEADERS.some((name) => response.headers.has(name))) return response;
  const headers = new Headers(response.headers);
  for (const name of STRIPPED_RESPONSE_HEADERS) headers.delete(name);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** An authorizer that always sends one known token and hands a refusal back as it is. */
export function fixedTokenAuthorizer(token: string): UpstreamAuthorizer {
  return { token: async () => token, unauthorized: async ({ response }) => ({ answer: response }) };
}
