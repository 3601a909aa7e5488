/**
 * One call of an OpenAPI operation (Eve's rules): path parameters substituted URL-encoded (`.` and
 * `..` refused before anything is sent), query arrays repeated, cookies joined into one header,
 * the JSON body, the credential where the security scheme says. Every answer, 4xx and 5xx
 * included, is a result `{ status, statusText, body }`.
 */
import type { Operation, SecurityPlacement } from './operations.ts';

export interface OperationRequest {
  url: URL;
  method: string;
  /** Every header of the request, the credential's included. */
  headers: Record<string, string>;
  body?: string;
}

export interface OperationResult {
  status: number;
  statusText: string;
  /** Parsed JSON when the answer says it is JSON, else its text; `null` when empty. */
  body: unknown;
}

/** A call the bridge refuses before sending anything; its message is for the model. */
export class OperationInputError extends Error {
  override name = 'OperationInputError';
}

/**
 * The request for `args` (the model's input with any provided arguments in place).
 * `credentials` are the connection's resolved headers (`Authorization: Bearer …` for a bearer token).
 */
export function operationRequest(
  connection: string,
  baseUrl: string,
  operation: Operation,
  args: Record<string, unknown>,
  credentials: Readonly<Record<string, string>>,
): OperationRequest {
  const headers: Record<string, string> = { ...credentials };
  const query = new URLSearchParams();
  const cookies: string[] = [];
  let path = operation.pathTemplate;
  for (const parameter of operation.parameters) {
    const value = args[parameter.name];
    if (value === undefined || value === null) continue;
    if (parameter.location === 'path') {
      const text = String(value);
      if (text === '.' || text === '..') {
        throw new OperationInputError(`Path parameter "${parameter.name}" for tool "${operation.toolName}" in connection "${connection}" must not be "." or "..".`);
      }
      path = path.replace(`{${parameter.name}}`, encodeURIComponent(text));
    } else if (parameter.location === 'query') {
      for (const item of Array.isArray(value) ? value : [value]) query.append(parameter.name, String(item));
    } else if (parameter.location === 'cookie') cookies.push(`${parameter.name}=${encodeURIComponent(String(value))}`);
    else headers[parameter.name.toLowerCase()] = String(value);
  }
  placeCredential(operation.security, headers, query, cookies);
  if (cookies.length > 0) headers.cookie = [headers.cookie, ...cookies].filter(Boolean).join('; ');
  const url = new URL(`${baseUrl.replace(/\/$/, '')}${path.startsWith('/') ? path : `/${path}`}`);
  url.search = query.toString();
  const request: OperationRequest = { url, method: operation.method.toUpperCase(), headers };
  if (operation.requestBody && args.body !== undefined) {
    request.body = JSON.stringify(args.body);
    headers['content-type'] = operation.requestBody.contentType;
  }
  return request;
}

/** A bearer credential moved where an `apiKey` or `basic` scheme wants it (Eve's rule: the token as it is). */
function placeCredential(security: SecurityPlacement | undefined, headers: Record<string, string>, query: URLSearchParams, cookies: string[]): void {
  const token = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
  if (security === undefined || security.kind === 'bearer' || token === undefined) return;
  if (security.kind === 'basic') {
    headers.authorization = `Basic ${token}`;
    return;
  }
  delete headers.authorization;
  if (security.in === 'header') headers[security.name.toLowerCase()] = token;
  else if (security.in === 'query') query.set(security.name, token);
  else cookies.push(`${security.name}=${token}`);
}

/** The answer as a result: JSON parsed when the content type says JSON, else text, `null` when empty. */
export async function operationResult(response: Response): Promise<OperationResult> {
  const text = await response.text();
  let body: unknown = text === '' ? null : text;
  if (text !== '' && (response.headers.get('content-type') ?? '').includes('application/json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, statusText: response.statusText, body };
}
