import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DirectToolOutcome, Logger, Principal, PublishedTool } from '@eve-flue/session-contract';
import { decideApproval, modelFacingSchema, ProvidedArgumentError, withProvidedArguments, type ConnectionRegistry, type ConnectionToolAnnotations, type FlueConnectionDefinition, type ParkingTurn, type SessionScope } from '@eve-flue/connections';
import type { BridgedConnection } from './connection-tools.ts';

export interface DirectToolCallsOptions {
  /** The caller's connections: the config's, or their own set when connections are resolved per caller. */
  connectionsFor: (principal: Principal | undefined) => Promise<ConnectionRegistry>;
  /** The connection as mounted for one scope: the same credentials, sign-ins and timeouts as a turn's. */
  mount: (definition: Readonly<FlueConnectionDefinition>, scope: SessionScope) => BridgedConnection;
  logger: Logger;
}

/**
 * Connection tools called directly by a caller, with no model turn and no session (Eve's
 * published tools): the connection's approval policy is asked first, the caller's own
 * credentials go upstream, and a call that would need a person (an approval, a sign-in) does
 * not run and says so.
 */
export class DirectToolCalls {
  readonly #options: DirectToolCallsOptions;

  constructor(options: DirectToolCallsOptions) {
    this.#options = options;
  }

  /** The caller's mounted connection tools, under their Eve names, as their servers listed them. */
  async published(principal: Principal | undefined): Promise<PublishedTool[]> {
    const connections = await this.#options.connectionsFor(principal);
    const mountable = new Set(connections.mountable().map((d) => d.name));
    return connections
      .listedTools()
      .filter(({ origin }) => mountable.has(origin.server))
      .map(({ origin, listed }) => ({
        name: origin.eveName,
        ...(listed.description ? { description: listed.description } : {}),
        // Without the arguments the application provides, as a turn's model sees it.
        inputSchema: isObject(listed.inputSchema) ? (modelFacingSchema(listed.inputSchema, connections.definition(origin.server)) as Record<string, unknown>) : { type: 'object' },
        ...(isObject(entryOf(listed.definition).outputSchema) ? { outputSchema: entryOf(listed.definition).outputSchema as Record<string, unknown> } : {}),
      }));
  }

  async invoke(name: string, input: Record<string, unknown>, principal: Principal | undefined): Promise<DirectToolOutcome> {
    const connections = await this.#options.connectionsFor(principal);
    const found = connections.listedTools().find(({ origin }) => origin.eveName === name);
    if (!found) return { status: 'failed', message: `No published tool is named ${name}.` };
    const { origin, listed } = found;
    const definition = connections.definition(origin.server);
    if (definition.requiresPrincipal && !principal) return { status: 'denied', reason: `The tool "${name}" is only for authenticated callers.` };
    const decision = await decideApproval(definition, { toolName: name, input, annotations: entryOf(listed.definition).annotations as ConnectionToolAnnotations | undefined }, this.#options.logger);
    if (decision === 'denied') return { status: 'denied', reason: `The approval policy of ${definition.name} denied this call.` };
    if (decision === 'user-approval') return { status: 'approval-required' };

    // A sign-in cannot be waited for here: the authorizer's park is answered at once, and noted.
    let signInNeeded = false;
    const scope: SessionScope = {
      sessionId: `tool_${randomUUID()}`,
      turn: (): ParkingTurn => ({
        turnId: 'direct',
        ...(principal ? { principal } : {}),
        park: async () => {
          signInNeeded = true;
          return { outcome: 'declined', reason: 'a direct tool call cannot wait for a sign-in' };
        },
      }),
    };
    let args: unknown;
    try {
      const callId = `call_${randomUUID()}`;
      args = await withProvidedArguments(definition, input, async () => ({ sessionId: scope.sessionId, ...(principal ? { principal: principal.id, auth: principal } : {}), toolName: origin.tool, callId }));
    } catch (error) {
      if (error instanceof ProvidedArgumentError) return { status: 'failed', message: error.message.replace(/^\[eve-flue\] /, '') };
      throw error;
    }
    const { mount, authorizer } = this.#options.mount(definition, scope);
    const refusalsBefore = authorizer?.refusals ?? 0;
    const needsSignIn = () => signInNeeded || (authorizer !== undefined && authorizer.refusals > refusalsBefore);
    const client = new Client({ name: 'eve-flue-bridge', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(String(mount.url)), { fetch: mount.fetch });
    try {
      await client.connect(transport);
      const result = (await client.callTool({ name: origin.tool, arguments: args as Record<string, unknown> })) as CallToolResult;
      if (needsSignIn()) return { status: 'authorization-required', connections: [definition.name] };
      const text = textOf(result);
      if (result.isError) return { status: 'failed', message: text || `The tool "${name}" failed.` };
      return { status: 'completed', output: result.structuredContent ?? text, text };
    } catch (error) {
      if (needsSignIn()) return { status: 'authorization-required', connections: [definition.name] };
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams) return { status: 'invalid-input', message: error.message };
      throw error;
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    }
  }
}

/** The fields of a `tools/list` entry as its server sent it. */
const entryOf = (definition: unknown): Record<string, unknown> => (isObject(definition) ? definition : {});

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function textOf(result: CallToolResult): string {
  return result.content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n');
}
