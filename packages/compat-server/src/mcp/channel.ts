import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { AgentRuntime, Principal } from '@eve-flue/session-contract';
import { identified, refusalHeaders } from '../auth/middleware.ts';
import type { RouteAuthContext, RouteAuthPolicy } from '../auth/route-auth.ts';
import { authenticate as walkRouteAuth } from '../auth/walk.ts';
import { isJson, readJsonBody } from '../http/json-body.ts';
import { sendRefusal } from '../http/refusal.ts';
import type { RequestLimits } from '../http/limits.ts';
import type { Site } from '../http/site.ts';
import type { Journal } from '../journal/journal.ts';
import type { Logger } from '../logger.ts';
import { RequestError } from '../session/errors.ts';
import type { Sessions } from '../session/sessions.ts';
import { agentToolInputs, agentTools, INSTRUCTIONS, invalidArguments, isAgentTool, type AgentToolInput, type AgentToolName, type ListedTool } from './agent-tools.ts';
import { guardRequest, requestOrigin, rpcError } from './http-guard.ts';
import { InvocationRejection, Invocations } from './invocations.ts';
import type { InvocationState } from './invocation-state.ts';
import { METADATA_PREFIX, protectedResourceMetadata, withResourceMetadata, type McpOAuthOptions } from './protected-resource.ts';
import { internalError, PublishedTools, toolError } from './published-tools.ts';

/** The `mcp` setting: Eve's MCP channel, served on the bridge's sessions. */
export interface McpChannelOptions {
  /** Where the Streamable HTTP endpoint lives, under the app's mount path. Default `/eve/v1/mcp`. */
  route?: string;
  /** Serve `agent_start`, `agent_get`, `agent_update` and `agent_cancel`. Default true. */
  agent?: boolean;
  /** Publish the agent's tools too, callable with no model turn. Default false. */
  tools?: boolean;
  /** Advertise an authorization server to MCP hosts (RFC 9728 metadata and the 401 challenge). */
  oauth?: McpOAuthOptions;
}

export const DEFAULT_MCP_ROUTE = '/eve/v1/mcp';
/** Eve's cap on a whole MCP request body. */
export const MAX_MCP_BODY_BYTES = 1_048_576;

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface McpChannelDependencies {
  sessions: Sessions;
  journal: Journal;
  runtime: AgentRuntime;
  auth: RouteAuthPolicy | undefined;
  authContext: RouteAuthContext;
  logger: Logger;
  limits: RequestLimits;
  site: Site | undefined;
  publicUrl: string | undefined;
  /** Why `agent_start` may not start a turn now (the instance drains). */
  newTurnRefusal: (() => RequestError | undefined) | undefined;
}

/** Fails at load, naming the field, for a setting the channel cannot serve. */
export function validateMcpOptions(options: McpChannelOptions): void {
  const fail = (problem: string): never => {
    throw new Error(`\`mcp${problem}`);
  };
  if (typeof options !== 'object' || options === null) fail('` must be an object, e.g. {} or { tools: true }');
  for (const key of Object.keys(options)) if (!['route', 'agent', 'tools', 'oauth'].includes(key)) fail(`.${key}\` is not an MCP channel setting`);
  if (options.route !== undefined && !(typeof options.route === 'string' && /^\/[\w\-./~]*$/.test(options.route) && !options.route.endsWith('/'))) fail('.route` must be a path such as "/mcp"');
  if (options.agent !== undefined && typeof options.agent !== 'boolean') fail('.agent` must be true or false');
  if (options.tools !== undefined && typeof options.tools !== 'boolean') fail('.tools` must be true or false');
  if (options.agent === false && !options.tools) fail('` publishes nothing with agent and tools both off: enable one');
  const oauth = options.oauth;
  if (oauth !== undefined) {
    if (typeof oauth !== 'object' || oauth === null || typeof oauth.issuer !== 'string' || !URL.canParse(oauth.issuer)) fail('.oauth.issuer` must be the authorization server URL');
    if (oauth!.scopes !== undefined && !(Array.isArray(oauth!.scopes) && oauth!.scopes.every((s) => typeof s === 'string' && s.length > 0 && !/\s/.test(s)))) fail('.oauth.scopes` must be a list of scope names');
    if (oauth!.resource !== undefined && !(typeof oauth!.resource === 'string' && URL.canParse(oauth!.resource))) fail('.oauth.resource` must be an absolute URL');
  }
}

/**
 * Eve's MCP channel: Streamable HTTP, stateless (no MCP session is kept; each POST gets its own
 * server), the protocol itself handled by the MCP SDK. Invocations are the bridge's sessions.
 */
export function mcpChannel(options: McpChannelOptions, deps: McpChannelDependencies): Router {
  validateMcpOptions(options);
  const route = options.route ?? DEFAULT_MCP_ROUTE;
  const serveAgent = options.agent ?? true;
  const handlers = agentToolHandlers(new Invocations(deps.sessions, deps.journal));
  const router = Router();

  /** The app's public base (origin and mount path), the endpoint and its metadata URL. */
  const addresses = (request: Request) => {
    const origin = requestOrigin(request, deps.publicUrl) ?? '';
    const base = `${origin}${request.baseUrl}`;
    return { resource: `${base}${route}`, metadata: `${base}${METADATA_PREFIX}${route}` };
  };

  const metadataPath = `${METADATA_PREFIX}${route}`;
  if (options.oauth) {
    const oauth = options.oauth;
    router.options(metadataPath, (request, response) => {
      if (!guardRequest(request, response, deps.site, deps.publicUrl, { checkOrigin: false })) return;
      response.set({ 'access-control-allow-methods': 'GET, HEAD, OPTIONS', 'access-control-allow-origin': '*', 'cache-control': 'no-store' });
      const asked = request.headers['access-control-request-headers'];
      if (asked) response.set({ 'access-control-allow-headers': asked, vary: 'Access-Control-Request-Headers' });
      response.status(204).end();
    });
    // Express answers HEAD with the GET route, without its body.
    router.get(metadataPath, (request, response) => {
      if (!guardRequest(request, response, deps.site, deps.publicUrl, { checkOrigin: false })) return;
      response.set({ 'access-control-allow-origin': '*', 'cache-control': 'no-store' }).json(protectedResourceMetadata(oauth, addresses(request).resource));
    });
  }

  /** Who is calling; undefined when refused (the 401 is sent). Anonymous only without route auth. */
  const authenticate = async (request: Request, response: Response): Promise<{ principal: Principal | undefined } | undefined> => {
    if (!deps.auth) return { principal: undefined };
    const admission = await walkRouteAuth(deps.auth, request, deps.authContext);
    // `none()` admits everyone as one anonymous principal: nobody in particular, as without auth.
    if (admission.ok) return { principal: identified(admission.principal) };
    const { refusal } = admission;
    const oauth = options.oauth;
    const challenges =
      refusal.code === 'unauthorized' && oauth ? withResourceMetadata(refusal.challenges, { url: addresses(request).metadata, ...(oauth.scopes ? { scopes: oauth.scopes } : {}) }) : refusal.challenges;
    sendRefusal(response, refusal.code, refusal.message, { headers: refusalHeaders({ ...refusal, challenges }) });
    return undefined;
  };

  const published = options.tools ? new PublishedTools(deps.runtime, serveAgent ? new Set(Object.keys(agentToolInputs)) : new Set(), deps.logger) : undefined;

  /** With no one identified (no route auth, or `none()`), every caller shares every invocation: the descriptions say so. */
  const listTools = async (principal: Principal | undefined): Promise<ListedTool[]> => [...(serveAgent ? agentTools(undefined, principal === undefined) : []), ...((await published?.list(principal)) ?? [])];

  const callTool = async (name: string, args: Record<string, unknown>, principal: Principal | undefined, signal: AbortSignal): Promise<CallToolResult> => {
    if (!serveAgent || !isAgentTool(name)) {
      const answer = await published?.call(name, args, principal, signal);
      if (!answer) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      return answer;
    }
    // Refused for now, to be called again (on another instance): Eve's codes have none for an unavailable server.
    const refusal = name === 'agent_start' ? deps.newTurnRefusal?.() : undefined;
    if (refusal) return toolError({ code: 'internal', message: refusal.message, retryable: true });
    const parsed = agentToolInputs[name].safeParse(args ?? {});
    if (!parsed.success) return toolError({ code: 'invalid_input', message: invalidArguments(name, parsed.error), retryable: false });
    try {
      return stateResult(await runAgentTool(handlers, name, parsed.data as AgentToolInput<typeof name>, principal));
    } catch (error) {
      if (error instanceof InvocationRejection) return toolError({ code: error.code, message: error.message, retryable: error.code === 'conflict' });
      return internalError(deps.logger, error, name);
    }
  };

  // The agent's name is fixed for the process: asked of the runtime once, not on every request
  // (describing the agent lists every tool).
  let agentName: string | undefined;
  const serverName = async (): Promise<string> => (agentName ??= (await deps.runtime.describe()).name);

  const serve: RequestHandler = async (request, response) => {
    const server = new Server(
      { name: await serverName(), version: VERSION },
      { capabilities: { tools: { listChanged: false } }, ...(serveAgent ? { instructions: INSTRUCTIONS } : {}) },
    );
    const principal = response.locals.principal as Principal | undefined;
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listTools(principal) }));
    // The call's signal aborts when its request closes (the transport closes with the response).
    server.setRequestHandler(CallToolRequestSchema, (call, extra) => callTool(call.params.name, call.params.arguments ?? {}, principal, extra.signal));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  };

  router.all(route, async (request, response, next) => {
    try {
      if (!guardRequest(request, response, deps.site, deps.publicUrl, { checkOrigin: true })) return;
      const caller = await authenticate(request, response);
      if (!caller) return;
      // Stateless, as Eve's: no stream to resume (GET) and no MCP session to end (DELETE).
      if (request.method !== 'POST') {
        sendRefusal(response, 'method_not_allowed', 'Method not allowed.', { headers: { allow: 'POST' }, body: rpcError(-32000, 'Method not allowed.') });
        return;
      }
      if (!isJson(request.headers['content-type'])) {
        const message = 'Unsupported Media Type: Content-Type must be application/json';
        sendRefusal(response, 'unsupported_media_type', message, { body: rpcError(-32000, message) });
        return;
      }
      response.locals.principal = caller.principal;
      next();
    } catch (error) {
      next(error);
    }
  });
  router.post(route, readJsonBody({ ...deps.limits, maxBodyBytes: MAX_MCP_BODY_BYTES }, () => rpcError(-32000, 'Request body too large')), serve);
  router.use(route, rpcErrors(deps.logger));
  return router;
}

type AgentToolHandlers = { [N in AgentToolName]: (input: AgentToolInput<N>, principal: Principal | undefined) => Promise<InvocationState> };

/** What each `agent_*` tool does with its checked arguments. */
function agentToolHandlers(invocations: Invocations): AgentToolHandlers {
  return {
    agent_start: ({ message }, principal) => invocations.start(principal, message),
    agent_get: ({ invocationId }, principal) => invocations.get(principal, invocationId),
    agent_update: ({ invocationId, responses }, principal) => invocations.update(principal, invocationId, responses),
    agent_cancel: ({ invocationId }, principal) => invocations.cancel(principal, invocationId),
  };
}

function runAgentTool<N extends AgentToolName>(handlers: AgentToolHandlers, name: N, input: AgentToolInput<N>, principal: Principal | undefined): Promise<InvocationState> {
  const handler: (input: AgentToolInput<N>, principal: Principal | undefined) => Promise<InvocationState> = handlers[name];
  return handler(input, principal);
}

/** The state as JSON text and as `structuredContent`, as Eve answers every `agent_*` call. */
function stateResult(state: InvocationState): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(state) }], structuredContent: state as unknown as Record<string, unknown> };
}

/** A body that could not be read is a JSON-RPC error, as the MCP transport would answer it. */
function rpcErrors(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    if (response.headersSent) return void response.end();
    if (error instanceof RequestError) {
      const parse = error.code === 'invalid_json';
      sendRefusal(response, error.code, error.message, { body: rpcError(parse ? -32700 : -32000, parse ? 'Parse error' : error.message) });
      return;
    }
    logger.error({ err: error, path: request.path }, 'MCP request failed');
    sendRefusal(response, 'internal_error', 'Internal error', { body: rpcError(-32603, 'Internal error') });
  };
}
