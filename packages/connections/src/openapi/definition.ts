import { checkCommonFields, failureFor, freezeDefinition, ConnectionDefinitionError, type FlueConnectionDefinition } from '../definition.ts';
import type { ToolFilter } from '../tool-call.ts';
import { baseUrlOf, checkTransport } from './document.ts';

/** An OpenAPI connection as an author declares it (Eve's `defineOpenAPIConnection` fields, and the bridge's credentials). */
export interface OpenAPIConnectionDefinition
  extends Pick<FlueConnectionDefinition, 'name' | 'description' | 'displayName' | 'headers' | 'auth' | 'toolCall' | 'approval' | 'requiresPrincipal' | 'timeoutMs' | 'instanceKey'> {
  /** The document's URL (https, or http on loopback), or the parsed OpenAPI 3.x / Swagger 2.0 document. */
  spec: string | Readonly<Record<string, unknown>>;
  /** Where operation paths are resolved; default: the document's first absolute `servers` entry (Swagger 2: `schemes`, `host`, `basePath`). */
  baseUrl?: string;
  /** Which operations become tools, by operationId (or the derived `<method>_<path>` name). */
  operations?: Exclude<ToolFilter, readonly string[]>;
}

const KEYS = new Set(['name', 'spec', 'baseUrl', 'description', 'displayName', 'headers', 'auth', 'operations', 'toolCall', 'approval', 'requiresPrincipal', 'timeoutMs', 'instanceKey']);

/**
 * One tool per operation of an OpenAPI 3.x or Swagger 2.0 API, named
 * `connection__<name>__<operationId>`. The result is a connection like any other: its `url` is
 * the API's base URL (or, when that comes from a fetched document, the document's URL), which
 * sign-ins take as the resource their tokens are for.
 */
export function defineOpenAPIConnection(definition: OpenAPIConnectionDefinition): Readonly<FlueConnectionDefinition> {
  if (typeof definition !== 'object' || definition === null) throw new ConnectionDefinitionError('[eve-flue] a connection definition must be an object');
  const fail = failureFor(definition);
  for (const key of Object.keys(definition)) if (!KEYS.has(key)) fail(key, 'is not an OpenAPI connection field');
  const { spec, baseUrl, operations, ...common } = definition;
  if (typeof spec === 'string') checkTransport(spec, (problem) => fail('spec', problem));
  else if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) fail('spec', 'must be a URL or an OpenAPI document object');
  else if (typeof spec.openapi !== 'string' && spec.swagger !== '2.0') fail('spec', 'is not an OpenAPI 3.x or Swagger 2.0 document (no `openapi` or `swagger: "2.0"`)');
  if (baseUrl !== undefined) checkTransport(baseUrl, (problem) => fail('baseUrl', problem));
  if (operations !== undefined && Array.isArray(operations)) fail('operations', 'must be `{ allow: [...] }` or `{ block: [...] }`');
  const url = baseUrl ?? (typeof spec === 'string' ? spec : baseUrlOf(spec, undefined));
  if (url === undefined) fail('baseUrl', 'is needed: the document declares no absolute `servers` entry (Swagger 2: `host`)');
  if (typeof spec !== 'string' && baseUrl === undefined) checkTransport(url as string, (problem) => fail('spec', `servers: ${problem}`));
  const connection: FlueConnectionDefinition = {
    ...common,
    url: url as string,
    ...(operations !== undefined ? { tools: operations } : {}),
    openapi: Object.freeze({ spec: typeof spec === 'string' ? spec : deepFreeze(structuredClone(spec)), ...(baseUrl !== undefined ? { baseUrl } : {}) }),
  };
  checkCommonFields(connection, fail, 'operations');
  return freezeDefinition(connection);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
