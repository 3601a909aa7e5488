/**
 * What every connection (MCP or OpenAPI) may say about its tools, decided in one place: which of
 * the server's tools the model sees (`tools: { allow } | { block }`, or an array as an
 * allowlist) and which arguments the application provides (`toolCall.providedArguments`), hidden
 * from the model's schema and put into the call just before it goes upstream.
 */
import type { CredentialContext } from './definition.ts';

/** The server's own tool names the model may see: an array is an allowlist. */
export type ToolFilter = readonly string[] | { readonly allow: readonly string[] } | { readonly block: readonly string[] };

/** Whom and which call a provided argument is resolved for. */
export interface ToolCallContext extends CredentialContext {
  /** The server's own (bare) tool name. */
  toolName: string;
  /** The model's id for this call: the same on every replay of the call (an idempotency key). */
  callId: string;
}

/** A JSON value (or a promise of one), or a function of the call giving one. */
export type ProvidedArgument =
  | string
  | number
  | boolean
  | null
  | readonly unknown[]
  | { readonly [key: string]: unknown }
  | Promise<unknown>
  | ((ctx: ToolCallContext) => unknown);

export interface ToolCallSettings {
  /** Arguments the application sets on every call, replacing any value the model gave. */
  providedArguments?: Readonly<Record<string, ProvidedArgument>>;
}

/** What a connection declares about its tools, as these rules read it. */
export interface ToolRules {
  name: string;
  tools?: ToolFilter | undefined;
  toolCall?: Readonly<ToolCallSettings> | undefined;
}

/** Whether the model sees the server's tool `tool`. */
export function selectsTool(filter: ToolFilter | undefined, tool: string): boolean {
  if (filter === undefined) return true;
  if (isAllowlist(filter)) return allowed(filter).includes(tool);
  return !filter.block.includes(tool);
}

/** The tools a filter names as required (its allowlist), if it has one. */
export function allowlistOf(filter: ToolFilter | undefined): readonly string[] | undefined {
  return filter !== undefined && isAllowlist(filter) ? allowed(filter) : undefined;
}

/** Whether these rules change what the model is shown of a server's tool listing. */
export function shapesListing(rules: ToolRules): boolean {
  return rules.tools !== undefined || providedArgumentNames(rules).length > 0;
}

export function providedArgumentNames(rules: ToolRules): string[] {
  return Object.keys(rules.toolCall?.providedArguments ?? {});
}

/** A tool's input schema as the model sees it: without the provided arguments. */
export function modelFacingSchema(schema: unknown, rules: ToolRules): unknown {
  const names = new Set(providedArgumentNames(rules));
  if (names.size === 0 || !isRecord(schema)) return schema;
  const shaped: Record<string, unknown> = { ...schema };
  if (isRecord(schema.properties)) shaped.properties = Object.fromEntries(Object.entries(schema.properties).filter(([key]) => !names.has(key)));
  if (Array.isArray(schema.required)) shaped.required = schema.required.filter((key) => typeof key !== 'string' || !names.has(key));
  return shaped;
}

/** A `tools/list` result as the model sees it: filtered, schemas without the provided arguments. */
export function modelFacingListing(result: unknown, rules: ToolRules): unknown {
  if (!isRecord(result) || !Array.isArray(result.tools)) return result;
  const tools = result.tools
    .filter((tool) => isRecord(tool) && typeof tool.name === 'string' && selectsTool(rules.tools, tool.name))
    .map((tool) => ({ ...(tool as Record<string, unknown>), inputSchema: modelFacingSchema((tool as Record<string, unknown>).inputSchema, rules) }));
  return { ...result, tools };
}

/** A provided argument could not be resolved. The message names the argument, never a value. */
export class ProvidedArgumentError extends Error {
  override name = 'ProvidedArgumentError';
}

/**
 * The arguments sent upstream: the model's, with every provided argument resolved and put in
 * its place. `context` is asked for only when a provided argument is a function.
 */
export async function withProvidedArguments(
  rules: ToolRules,
  input: unknown,
  context: () => Promise<ToolCallContext>,
): Promise<unknown> {
  const provided = Object.entries(rules.toolCall?.providedArguments ?? {});
  if (provided.length === 0) return input;
  const args: Record<string, unknown> = isRecord(input) ? { ...input } : {};
  let ctx: Promise<ToolCallContext> | undefined;
  for (const [key, value] of provided) {
    let resolved: unknown;
    try {
      resolved = typeof value === 'function' ? await value({ ...(await (ctx ??= context())) }) : await value;
    } catch (error) {
      throw new ProvidedArgumentError(`[eve-flue] connection "${rules.name}": provided argument \`${key}\` could not be resolved`, { cause: error });
    }
    args[key] = jsonValue(resolved, () => new ProvidedArgumentError(`[eve-flue] connection "${rules.name}": provided argument \`${key}\` must resolve to a JSON value`));
  }
  return args;
}

/** Checks `tools` and `toolCall` of a definition; `fail` names the field. */
export function checkToolRules(definition: { tools?: unknown; toolCall?: unknown }, fail: (field: string, problem: string) => never, toolsField = 'tools'): void {
  const filter = definition.tools;
  if (filter !== undefined) {
    const names = (list: unknown, field: string): void => {
      if (!Array.isArray(list) || list.some((t) => typeof t !== 'string' || t === '')) fail(field, 'must be an array of tool names');
      if (new Set(list as string[]).size !== (list as string[]).length) fail(field, 'lists a tool twice');
    };
    if (Array.isArray(filter)) names(filter, toolsField);
    else if (isRecord(filter) && Object.keys(filter).length === 1 && ('allow' in filter || 'block' in filter)) {
      names(filter.allow ?? filter.block, `${toolsField}.${'allow' in filter ? 'allow' : 'block'}`);
    } else fail(toolsField, 'must be `{ allow: [...] }` or `{ block: [...] }` (exactly one), or an array of tool names');
  }
  const toolCall = definition.toolCall;
  if (toolCall === undefined) return;
  if (!isRecord(toolCall)) fail('toolCall', 'must be an object `{ providedArguments }`');
  for (const key of Object.keys(toolCall)) if (key !== 'providedArguments') fail(`toolCall.${key}`, 'is not a tool-call setting');
  const provided = toolCall.providedArguments;
  if (provided === undefined) return;
  if (!isRecord(provided)) fail('toolCall.providedArguments', 'must be an object of values or functions `(ctx) => value`');
  for (const [key, value] of Object.entries(provided)) {
    if (key === '') fail('toolCall.providedArguments', 'may not have an empty key');
    if (typeof value !== 'function' && !(value instanceof Promise)) {
      jsonValue(value, () => fail(`toolCall.providedArguments.${key}`, 'must be a JSON value or a function `(ctx) => value`'));
    }
  }
}

/** A frozen copy of a definition's `tools` and `toolCall`. */
export function frozenToolRules(definition: { tools?: ToolFilter | undefined; toolCall?: Readonly<ToolCallSettings> | undefined }): {
  tools?: ToolFilter;
  toolCall?: Readonly<ToolCallSettings>;
} {
  const { tools, toolCall } = definition;
  return {
    ...(tools === undefined
      ? {}
      : { tools: Array.isArray(tools) ? Object.freeze([...tools]) : Object.freeze(isAllowlist(tools) ? { allow: Object.freeze([...allowed(tools)]) } : { block: Object.freeze([...(tools as { block: readonly string[] }).block]) }) }),
    ...(toolCall === undefined ? {} : { toolCall: Object.freeze({ ...(toolCall.providedArguments ? { providedArguments: Object.freeze({ ...toolCall.providedArguments }) } : {}) }) }),
  };
}

function isAllowlist(filter: ToolFilter): filter is readonly string[] | { readonly allow: readonly string[] } {
  return Array.isArray(filter) || 'allow' in filter;
}

function allowed(filter: readonly string[] | { readonly allow: readonly string[] }): readonly string[] {
  return Array.isArray(filter) ? filter : (filter as { allow: readonly string[] }).allow;
}

/** `value` as a JSON value (a copy), or the error `refuse` makes. */
function jsonValue(value: unknown, refuse: () => Error): unknown {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') throw refuse();
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    throw refuse();
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
