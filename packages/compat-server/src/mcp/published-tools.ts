import { randomUUID } from 'node:crypto';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentRuntime, DirectToolOutcome, Principal, PublishedTool } from '@eve-flue/session-contract';
import type { Logger } from '../logger.ts';
import type { ListedTool } from './agent-tools.ts';

/** A rejected call: `isError`, with Eve's `structuredContent.error`. */
export function toolError(error: { code: string; message: string; retryable: boolean; errorId?: string }): CallToolResult {
  const text = error.errorId === undefined ? error.message : `${error.message} (errorId: ${error.errorId})`;
  return { content: [{ type: 'text', text }], isError: true, structuredContent: { error: { ...error } } };
}

/** Logs a failure under a fresh id and answers `internal` with that id, as Eve does; no details reach the caller. */
export function internalError(logger: Logger, error: unknown, tool: string): CallToolResult {
  const errorId = randomUUID();
  logger.error({ err: error, errorId, tool }, 'MCP tool call failed');
  return toolError({ code: 'internal', errorId, message: 'The server could not complete this tool call.', retryable: false });
}

/**
 * The agent's tools as the MCP channel publishes them (`tools: true`): listed after the
 * `agent_*` tools in name order, arguments checked against their input schema, run by the
 * runtime for the caller with no model turn, and each outcome answered as Eve answers it.
 */
export class PublishedTools {
  readonly #runtime: AgentRuntime;
  readonly #reserved: ReadonlySet<string>;
  readonly #logger: Logger;
  readonly #validator = new AjvJsonSchemaValidator();
  readonly #validators = new Map<string, ((input: unknown) => { valid: boolean; errorMessage?: string | undefined }) | undefined>();
  readonly #warned = new Set<string>();

  constructor(runtime: AgentRuntime, reserved: ReadonlySet<string>, logger: Logger) {
    this.#runtime = runtime;
    this.#reserved = reserved;
    this.#logger = logger;
  }

  /** The caller's tools; none when they cannot be resolved for them (logged: the `agent_*` tools are still listed). */
  async list(principal: Principal | undefined): Promise<ListedTool[]> {
    let tools: PublishedTool[];
    try {
      tools = await this.#tools(principal);
    } catch (error) {
      this.#logger.warn({ err: error }, 'the published tools could not be resolved for this caller; tools/list leaves them out');
      return [];
    }
    return tools.map((tool) => ({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: { ...tool.inputSchema, type: 'object' },
      ...(tool.outputSchema ? { outputSchema: { ...tool.outputSchema, type: 'object' } } : {}),
    }));
  }

  /** The call's answer, or undefined when none of the caller's published tools has that name. */
  async call(name: string, input: Record<string, unknown>, principal: Principal | undefined, signal?: AbortSignal): Promise<CallToolResult | undefined> {
    let tools: PublishedTool[];
    try {
      tools = await this.#tools(principal);
    } catch (error) {
      return internalError(this.#logger, error, name);
    }
    const tool = tools.find((t) => t.name === name);
    if (!tool || !this.#runtime.invokeTool) return undefined;
    const check = this.#validatorOf(tool);
    const checked = check?.(input);
    if (checked && !checked.valid) return toolError({ code: 'invalid_input', message: `Invalid arguments for tool ${name}: ${checked.errorMessage}`, retryable: false });
    let outcome: DirectToolOutcome;
    try {
      outcome = await this.#runtime.invokeTool(name, input, principal, signal);
    } catch (error) {
      return internalError(this.#logger, error, name);
    }
    return answerOf(name, outcome, tool.outputSchema !== undefined, this.#logger);
  }

  async #tools(principal: Principal | undefined): Promise<PublishedTool[]> {
    const tools = (await this.#runtime.publishedTools?.(principal)) ?? [];
    return tools
      .filter((tool) => {
        if (!this.#reserved.has(tool.name)) return true;
        if (!this.#warned.has(tool.name)) {
          this.#warned.add(tool.name);
          this.#logger.warn({ tool: tool.name }, 'the MCP channel does not publish this tool: the channel serves that name');
        }
        return false;
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A compiled check of the tool's input schema; none when the schema cannot be compiled (the server still checks). */
  #validatorOf(tool: PublishedTool) {
    const key = `${tool.name}\u0000${JSON.stringify(tool.inputSchema)}`;
    if (!this.#validators.has(key)) {
      let validator;
      try {
        const { $schema: _, ...schema } = tool.inputSchema;
        validator = this.#validator.getValidator(schema as Parameters<AjvJsonSchemaValidator['getValidator']>[0]);
      } catch (error) {
        this.#logger.warn({ err: error, tool: tool.name }, 'the input schema of a published tool cannot be compiled; its server checks the arguments');
      }
      this.#validators.set(key, validator);
    }
    return this.#validators.get(key);
  }
}

function answerOf(name: string, outcome: DirectToolOutcome, hasOutputSchema: boolean, logger: Logger): CallToolResult {
  switch (outcome.status) {
    case 'completed': {
      const text = outcome.text || JSON.stringify(outcome.output ?? null);
      const structured = hasOutputSchema || (typeof outcome.output === 'object' && outcome.output !== null && !Array.isArray(outcome.output));
      return structured
        ? { content: [{ type: 'text', text }], structuredContent: (outcome.output ?? null) as Record<string, unknown> }
        : { content: [{ type: 'text', text }] };
    }
    case 'invalid-input':
      return toolError({ code: 'invalid_input', message: outcome.message, retryable: false });
    case 'denied':
      return toolError({ code: 'denied', message: outcome.reason, retryable: false });
    case 'approval-required':
      return toolError({
        code: 'approval_required',
        message: `The tool "${name}" needs a person's approval, which this MCP channel cannot ask for. Call it from a conversation instead.`,
        retryable: false,
      });
    case 'authorization-required':
      return toolError({
        code: 'authorization_required',
        message: `The tool "${name}" needs a sign-in to ${outcome.connections.join(', ')}, which this MCP channel cannot ask for. Sign in from a conversation, then call it again.`,
        retryable: false,
      });
    case 'failed':
      return internalError(logger, new Error(outcome.message), name);
  }
}
