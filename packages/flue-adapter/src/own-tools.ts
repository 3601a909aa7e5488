import { randomUUID } from 'node:crypto';
import { defineTool, type ToolDefinition, type ToolStep } from '@flue/runtime';
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { isConnectionToolName } from '@eve-flue/connections';
import type { DirectToolOutcome, Logger, PublishedTool, ToolDescription } from '@eve-flue/session-contract';

/**
 * The names Flue keeps for its own tools (its `assembleModelTools`, not exported): a custom tool
 * so named fails every render with `tool_name_conflict`. A test checks the list against Flue.
 */
export const FLUE_RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set(['task', 'activate_skill', 'read_skill_resource', 'finish', 'give_up']);

/** Flue's object schema types: only these have a JSON Schema an MCP `outputSchema` may be. */
const OBJECT_SCHEMA_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest']);

/**
 * The `tools` setting checked and frozen, or an error naming the entry: each is a Flue tool
 * definition (Flue's own `defineTool` checks it), names are unique, none is one Flue keeps for
 * itself, and none looks like a connection tool's (`connection__*`, `mcp__*`), which the bridge names itself.
 */
export function checkedTools(tools: readonly unknown[]): readonly ToolDefinition[] {
  const seen = new Set<string>();
  return Object.freeze(
    tools.map((entry, index) => {
      const name = (entry as { name?: unknown } | null)?.name;
      const label = `\`tools[${index}]\`${typeof name === 'string' ? ` (${name})` : ''}`;
      let tool: ToolDefinition;
      try {
        tool = defineTool(entry as Parameters<typeof defineTool>[0]) as ToolDefinition;
      } catch (error) {
        throw new Error(`${label} is not a Flue tool definition: ${(error as Error).message.replace(/^\[flue\] /, '')}`);
      }
      if (FLUE_RESERVED_TOOL_NAMES.has(tool.name)) throw new Error(`${label}: Flue keeps the name ${tool.name} for its own tool (it keeps ${[...FLUE_RESERVED_TOOL_NAMES].join(', ')})`);
      if (isConnectionToolName(tool.name)) throw new Error(`${label}: the names connection__* and mcp__* belong to connection tools`);
      if (seen.has(tool.name)) throw new Error(`${label}: another tool is named ${tool.name}; tool names must be unique`);
      if (tool.timeoutMs !== undefined && !(Number.isInteger(tool.timeoutMs) && tool.timeoutMs > 0)) throw new Error(`${label}: timeoutMs must be a positive number of milliseconds`);
      seen.add(tool.name);
      return tool;
    }),
  );
}

/**
 * The agent's own Flue tools, as the bridge config lists them: mounted on every render with the
 * connection tools, and published for direct calls (Eve's published tools), run here with no
 * model turn. Flue has no API to read the tools a render mounts, hence the config list.
 */
export class OwnTools {
  readonly #tools: ReadonlyMap<string, ToolDefinition>;
  /** The JSON Schema of each tool's input, derived once. */
  readonly #inputSchemas: ReadonlyMap<string, Record<string, unknown>>;
  readonly #logger: Logger;
  #published: PublishedTool[] | undefined;

  constructor(tools: readonly ToolDefinition[], logger: Logger) {
    this.#tools = new Map(checkedTools(tools).map((tool) => [tool.name, tool]));
    this.#inputSchemas = new Map([...this.#tools.values()].map((tool) => [tool.name, tool.input ? jsonSchemaOf(tool.input) : { type: 'object' }]));
    this.#logger = logger;
  }

  /** Every one of them, for each render to mount. */
  get all(): IterableIterator<ToolDefinition> {
    return this.#tools.values();
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  described(): ToolDescription[] {
    return [...this.#tools.values()].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: this.#inputSchemas.get(tool.name) }));
  }

  /** Those that run outside a conversation: not `harness` tools, which need an agent session. */
  published(): PublishedTool[] {
    if (this.#published) return this.#published;
    this.#published = [];
    for (const tool of this.#tools.values()) {
      if (tool.harness) {
        this.#logger.warn({ tool: tool.name }, 'the MCP channel does not publish this tool: a harness tool runs only inside an agent session');
        continue;
      }
      this.#published.push({
        name: tool.name,
        description: tool.description,
        inputSchema: this.#inputSchemas.get(tool.name)!,
        ...(tool.output && OBJECT_SCHEMA_TYPES.has(tool.output.type) ? { outputSchema: jsonSchemaOf(tool.output) } : {}),
      });
    }
    return this.#published;
  }

  /**
   * Runs a published tool for a caller: its arguments parsed by its input schema, its output by
   * its output schema, as Flue would. A throw, a timeout (`timeoutMs`) or the caller going away
   * (`signal`) fails the call; nothing of the caller (its principal) reaches the tool.
   */
  async invoke(name: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<DirectToolOutcome> {
    const tool = this.#tools.get(name);
    if (!tool || tool.harness) return { status: 'failed', message: `No published tool is named ${name}.` };
    let data: unknown;
    if (tool.input) {
      const parsed = v.safeParse(tool.input, input);
      if (!parsed.success) return { status: 'invalid-input', message: `Invalid arguments for tool ${name}: ${issuesOf(parsed.issues)}` };
      data = parsed.output;
    }
    const toolCallId = `call_${randomUUID()}`;
    const callSignal = AbortSignal.any([...(signal ? [signal] : []), ...(tool.timeoutMs ? [AbortSignal.timeout(tool.timeoutMs)] : [])]);
    const context = {
      toolCallId,
      signal: callSignal,
      log: this.#logFor(name, toolCallId),
      ...(tool.input ? { data } : {}),
      ...(tool.durable ? { step: standaloneStep(name) } : {}),
    };
    const aborted = new Promise<never>((_, reject) => {
      if (callSignal.aborted) reject(callSignal.reason as Error);
      callSignal.addEventListener('abort', () => reject(callSignal.reason as Error), { once: true });
    });
    const running = Promise.resolve().then(() => tool.run(context as never));
    // The one that loses the race settles unobserved: an abandoned run's late failure included.
    for (const settling of [aborted, running]) settling.catch(() => undefined);
    let result: unknown;
    try {
      result = await Promise.race([running, aborted]);
    } catch (error) {
      if (!callSignal.aborted || error !== callSignal.reason) throw error;
      return { status: 'failed', message: (error as Error).name === 'TimeoutError' ? `Tool "${name}" timed out after ${tool.timeoutMs}ms.` : `Tool "${name}" was abandoned: its caller went away.` };
    }
    const output = outputOf(tool, result);
    return { status: 'completed', output, text: typeof output === 'string' ? output : JSON.stringify(output) };
  }

  /**
   * A call's progress lines go to the bridge's log, not to a caller: `info` at debug, `warn` and
   * `error` at info (the call's failure itself is logged by the channel, with its errorId).
   */
  #logFor(tool: string, toolCallId: string) {
    const line = (level: 'debug' | 'info', toolLevel: string) => (message: string, attributes?: Record<string, unknown>) =>
      this.#logger[level]({ tool, toolCallId, toolLevel, ...(attributes ? { attributes } : {}) }, message);
    return { info: line('debug', 'info'), warn: line('info', 'warn'), error: line('info', 'error') };
  }
}

function jsonSchemaOf(schema: v.GenericSchema): Record<string, unknown> {
  const { $schema: _, ...json } = toJsonSchema(schema, { errorMode: 'ignore' }) as Record<string, unknown>;
  return json;
}

function issuesOf(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .map((issue) => {
      const path = issue.path?.map((segment) => String(segment.key)).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join(', ');
}

/**
 * The output of a run, resolved as Flue resolves it: a bare string is the output, an object is
 * the `{ output, terminate }` envelope (there is no turn to terminate here), nothing is null; a
 * declared `output` schema must accept it. Anything else is the tool's bug, thrown.
 */
function outputOf(tool: ToolDefinition, result: unknown): unknown {
  let output: unknown;
  if (typeof result === 'string') output = result;
  else if (isPlainObject(result)) {
    const unexpected = Object.keys(result).find((key) => key !== 'output' && key !== 'terminate');
    if (unexpected !== undefined) throw new Error(`Tool "${tool.name}" run() returned an object with unexpected key "${unexpected}": a result is an { output?, terminate? } envelope`);
    output = result.output;
  } else if (result !== undefined) throw new Error(`Tool "${tool.name}" run() returned a bare ${result === null ? 'null' : typeof result}: wrap it, { output: <value> }`);
  if (tool.output) {
    const parsed = v.safeParse(tool.output, output);
    if (!parsed.success) throw new Error(`The output of tool "${tool.name}" does not match its output schema: ${issuesOf(parsed.issues)}`);
    output = parsed.output;
  }
  return output === undefined ? null : jsonCopy(output, `Tool "${tool.name}" output`);
}

/**
 * A durable tool's `step` outside a conversation, as Flue gives a standalone run: each name runs
 * once per call (a name used twice throws), values must be JSON; there is nothing to record in.
 */
function standaloneStep(tool: string): ToolStep {
  const used = new Set<string>();
  return {
    async do<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
      if (typeof name !== 'string' || name.trim() === '') throw new Error(`Tool "${tool}" step.do() requires a non-empty step name.`);
      if (used.has(name)) throw new Error(`Tool "${tool}" ran step.do("${name}") twice in one call: derive a distinct name per step.`);
      used.add(name);
      return jsonCopy(await fn(), `Tool "${tool}" step "${name}" value`) as T;
    },
  };
}

function jsonCopy(value: unknown, label: string): unknown {
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error(`${label} must be JSON-serializable`);
  return JSON.parse(text);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
