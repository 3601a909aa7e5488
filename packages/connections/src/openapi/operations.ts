/**
 * A dereferenced OpenAPI 3.x / Swagger 2.0 document as tools, by Eve's rules
 * (`eve/dist/src/runtime/connections/openapi-*.js`): one per operation, named by its sanitized
 * operationId or `<method>_<path>`, its input the path, query, header and cookie parameters plus
 * `body`, and the security scheme that says where the connection's credential goes.
 */
import type { OpenAPIDocument } from './document.ts';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
const MAX_NAME = 64;

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface OperationParameter {
  name: string;
  location: ParameterLocation;
  required: boolean;
  schema: unknown;
  description?: string;
}

/** Where a credential goes, from the operation's (or the document's) first usable security requirement. */
export type SecurityPlacement = { kind: 'bearer' } | { kind: 'basic' } | { kind: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string };

export interface Operation {
  /** The tool's (bare) name. */
  toolName: string;
  method: HttpMethod;
  pathTemplate: string;
  description: string;
  parameters: OperationParameter[];
  requestBody?: { required: boolean; contentType: string; schema: unknown };
  inputSchema: Record<string, unknown>;
  security?: SecurityPlacement;
}

/** Swagger 2.0 parameters carry their schema inline: these keys make it. */
const SWAGGER_PARAMETER_SCHEMA_KEYS = ['default', 'enum', 'exclusiveMaximum', 'exclusiveMinimum', 'format', 'items', 'maximum', 'maxItems', 'maxLength', 'minimum', 'minItems', 'minLength', 'multipleOf', 'pattern', 'type', 'uniqueItems'];

export function operationsOf(document: OpenAPIDocument): Operation[] {
  if (!isRecord(document.paths)) return [];
  const operations: Operation[] = [];
  const taken = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isRecord(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isRecord(operation)) continue;
      const parameters = parametersOf([...shared, ...(Array.isArray(operation.parameters) ? operation.parameters : [])]);
      const requestBody = requestBodyOf(operation.requestBody, [...shared, ...(Array.isArray(operation.parameters) ? operation.parameters : [])]);
      const security = securityOf(document, operation);
      operations.push({
        toolName: uniqueName(operationName(operation, method, path), taken),
        method,
        pathTemplate: path,
        description: typeof operation.summary === 'string' && operation.summary !== '' ? operation.summary : typeof operation.description === 'string' ? operation.description : '',
        parameters,
        ...(requestBody ? { requestBody } : {}),
        inputSchema: inputSchemaOf(parameters, requestBody),
        ...(security ? { security } : {}),
      });
    }
  }
  return operations;
}

/** Runs outside `[A-Za-z0-9_-]` become `_`, leading and trailing `_`/`-` go, at most 64 characters. */
export function sanitizeOperationName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]+/g, '_').replace(/^[_-]+|[_-]+$/g, '').slice(0, MAX_NAME);
}

export function operationName(operation: Record<string, unknown>, method: string, path: string): string {
  if (typeof operation.operationId === 'string' && operation.operationId !== '') {
    const name = sanitizeOperationName(operation.operationId);
    if (name !== '') return name;
  }
  return sanitizeOperationName(`${method}_${path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')}`);
}

/** A second `name` becomes `name_2`, a third `name_3`, … (still at most 64 characters). */
function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) candidate = `${name.slice(0, MAX_NAME - `_${n}`.length)}_${n}`;
  taken.add(candidate);
  return candidate;
}

/** Path-level and operation-level parameters; the operation's wins for the same name and place. Path parameters are required. */
function parametersOf(declared: unknown[]): OperationParameter[] {
  const byKey = new Map<string, OperationParameter>();
  for (const parameter of declared) {
    if (!isRecord(parameter) || typeof parameter.name !== 'string') continue;
    const location = parameter.in;
    if (location !== 'path' && location !== 'query' && location !== 'header' && location !== 'cookie') continue;
    byKey.set(`${location}:${parameter.name}`, {
      name: parameter.name,
      location,
      required: parameter.required === true || location === 'path',
      schema: normalizeSchema(isRecord(parameter.schema) ? parameter.schema : Object.fromEntries(SWAGGER_PARAMETER_SCHEMA_KEYS.filter((key) => parameter[key] !== undefined).map((key) => [key, parameter[key]]))),
      ...(typeof parameter.description === 'string' ? { description: parameter.description } : {}),
    });
  }
  return [...byKey.values()];
}

/** OpenAPI 3's `application/json` content (else the first one), or Swagger 2's `in: body` parameter. */
function requestBodyOf(requestBody: unknown, declared: unknown[]): Operation['requestBody'] {
  if (isRecord(requestBody) && isRecord(requestBody.content)) {
    const content = requestBody.content;
    const contentType = 'application/json' in content ? 'application/json' : Object.keys(content)[0];
    if (contentType !== undefined) {
      const media = content[contentType];
      return { required: requestBody.required === true, contentType, schema: normalizeSchema(isRecord(media) && isRecord(media.schema) ? media.schema : {}) };
    }
  }
  const body = declared.find((parameter) => isRecord(parameter) && parameter.in === 'body') as Record<string, unknown> | undefined;
  if (body === undefined) return undefined;
  return { required: body.required === true, contentType: 'application/json', schema: normalizeSchema(isRecord(body.schema) ? body.schema : {}) };
}

function inputSchemaOf(parameters: OperationParameter[], requestBody: Operation['requestBody']): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const parameter of parameters) {
    properties[parameter.name] = parameter.description === undefined ? parameter.schema : { ...(parameter.schema as object), description: parameter.description };
    if (parameter.required && !required.includes(parameter.name)) required.push(parameter.name);
  }
  if (requestBody) {
    properties.body = requestBody.schema;
    if (requestBody.required) required.push('body');
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function securityOf(document: OpenAPIDocument, operation: Record<string, unknown>): SecurityPlacement | undefined {
  const requirements = Array.isArray(operation.security) ? operation.security : Array.isArray(document.security) ? document.security : undefined;
  const schemes = isRecord(document.components) && isRecord(document.components.securitySchemes) ? document.components.securitySchemes : isRecord(document.securityDefinitions) ? document.securityDefinitions : undefined;
  if (!requirements || !schemes) return undefined;
  for (const requirement of requirements) {
    const schemeName = isRecord(requirement) ? Object.keys(requirement)[0] : undefined;
    const scheme = schemeName === undefined ? undefined : schemes[schemeName];
    const placement = isRecord(scheme) ? placementOf(scheme) : undefined;
    if (placement) return placement;
  }
  return undefined;
}

function placementOf(scheme: Record<string, unknown>): SecurityPlacement | undefined {
  if (scheme.type === 'apiKey') {
    const where = scheme.in;
    return (where === 'header' || where === 'query' || where === 'cookie') && typeof scheme.name === 'string' && scheme.name !== '' ? { kind: 'apiKey', in: where, name: scheme.name } : undefined;
  }
  if (scheme.type === 'http') return typeof scheme.scheme === 'string' && scheme.scheme.toLowerCase() === 'basic' ? { kind: 'basic' } : { kind: 'bearer' };
  if (scheme.type === 'basic') return { kind: 'basic' };
  if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') return { kind: 'bearer' };
  return undefined;
}

const JSON_SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** Eve's bound: deeper schemas are cut to `{}` (a property counts two levels). */
const MAX_SCHEMA_DEPTH = 12;

/**
 * A schema as the model is given it (Eve's normalization): a schema met again inside itself (a
 * cycle) and a `$ref` left unresolved become `{}`, unknown types go, `nullable` becomes a `null`
 * type, and a `default` or `example` that does not match the type goes. Returns a copy: the
 * dereferenced document shares its schema objects.
 */
export function normalizeSchema(schema: unknown, depth = 0, within: ReadonlySet<object> = new Set()): unknown {
  if (Array.isArray(schema)) return schema.map((item) => normalizeSchema(item, depth + 1, within));
  if (!isRecord(schema)) return schema;
  if (depth > MAX_SCHEMA_DEPTH || typeof schema.$ref === 'string' || within.has(schema)) return {};
  const inside = new Set(within).add(schema);
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'default' || key === 'example' || key === 'enum' || key === 'const') copy[key] = value;
    else if ((key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions') && isRecord(value)) {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, normalizeSchema(inner, depth + 2, inside)]));
    } else copy[key] = normalizeSchema(value, depth + 1, inside);
  }
  const type = copy.type;
  if (typeof type === 'string' && !JSON_SCHEMA_TYPES.has(type)) delete copy.type;
  else if (Array.isArray(type)) {
    const known = type.filter((t) => typeof t === 'string' && JSON_SCHEMA_TYPES.has(t));
    if (known.length === 0) delete copy.type;
    else copy.type = known;
  }
  if ('nullable' in copy) {
    const nullable = copy.nullable === true;
    delete copy.nullable;
    if (nullable) {
      if (typeof copy.type === 'string') {
        if (copy.type !== 'null') copy.type = [copy.type, 'null'];
      } else if (Array.isArray(copy.type)) {
        if (!copy.type.includes('null')) copy.type = [...copy.type, 'null'];
      } else if (Array.isArray(copy.enum) && !copy.enum.includes(null)) copy.enum = [...copy.enum, null];
    }
  }
  if (typeof copy.type === 'string' || Array.isArray(copy.type)) {
    const types = (typeof copy.type === 'string' ? [copy.type] : copy.type) as string[];
    for (const key of ['default', 'example'] as const) if (key in copy && !types.some((t) => matchesType(copy[key], t))) delete copy[key];
  }
  return copy;
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isRecord(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
