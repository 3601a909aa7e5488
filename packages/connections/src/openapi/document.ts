/**
 * An OpenAPI connection's document: fetched (no credentials, every redirect checked) or inline,
 * JSON or YAML, its local `$ref`s dereferenced by swagger-parser; and the base URL its
 * operations are called at.
 */
import { isIP } from 'node:net';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse as parseYaml } from 'yaml';
import { networkKind } from '../auth/outbound-guard.ts';

/** The largest document read from a spec URL. */
export const MAX_SPEC_BYTES = 16 * 1024 * 1024;
const MAX_REDIRECTS = 5;

export type OpenAPIDocument = Record<string, unknown>;

/** `https`, or `http` on a loopback host; no embedded credentials. Calls `refuse` with the problem otherwise. */
export function checkTransport(value: unknown, refuse: (problem: string) => never): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    return refuse(`is not a valid URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) refuse(`must use https (http only on loopback), not ${url.protocol}//${url.host}`);
  if (url.username || url.password) refuse('may not embed credentials');
  return url;
}

/**
 * Fetches the document at `specUrl`: no credentials and no cookies are sent, redirects are
 * followed by hand and each target checked again, and the body is bounded.
 */
export async function fetchDocument(specUrl: string, connection: string, timeoutMs: number): Promise<OpenAPIDocument> {
  const signal = AbortSignal.timeout(timeoutMs);
  let url = specUrl;
  for (let hop = 0; ; hop++) {
    checkTransport(url, (problem) => {
      throw new Error(`OpenAPI connection "${connection}": its spec URL ${problem}`);
    });
    const response = await fetch(url, { headers: { accept: 'application/json, application/yaml, text/yaml, */*' }, redirect: 'manual', credentials: 'omit', signal }).catch((error: unknown) => {
      throw new Error(`OpenAPI connection "${connection}" could not fetch its spec from ${url}: ${describe(error)}`);
    });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new Error(`OpenAPI connection "${connection}": its spec URL redirected more than ${MAX_REDIRECTS} times`);
      url = new URL(location, url).href;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`OpenAPI connection "${connection}" could not fetch its spec from ${url}: HTTP ${response.status}`);
    }
    return parseDocument(await boundedText(response, connection), connection, url);
  }
}

/** A document's text as JSON, else YAML. */
export function parseDocument(text: string, connection: string, where: string): OpenAPIDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    try {
      parsed = parseYaml(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new Error(`OpenAPI connection "${connection}": the spec at ${where} is neither JSON nor YAML: ${describe(error)}`);
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`OpenAPI connection "${connection}": the spec at ${where} is not an OpenAPI document`);
  return parsed as OpenAPIDocument;
}

/**
 * The document with its local `$ref`s replaced by what they point at (swagger-parser). External
 * references are never fetched or read (left as `$ref`s, which the schema normalizer turns into
 * `{}`); circular ones become cycles in the object graph, which it cuts.
 */
export async function dereference(document: Readonly<OpenAPIDocument>, connection: string): Promise<OpenAPIDocument> {
  try {
    const copy = structuredClone(document);
    return (await SwaggerParser.dereference(copy as never, { resolve: { external: false }, dereference: { circular: true } })) as unknown as OpenAPIDocument;
  } catch (error) {
    throw new Error(`OpenAPI connection "${connection}": the spec could not be read: ${describe(error)}`);
  }
}

/**
 * Where the document says its operations live: OpenAPI 3's first usable `servers` entry (variables
 * at their defaults, relative ones against the spec URL), else Swagger 2's `schemes` + `host` +
 * `basePath` (Eve's rule).
 */
export function baseUrlOf(document: Readonly<OpenAPIDocument>, specUrl: string | undefined): string | undefined {
  const servers = document.servers;
  if (Array.isArray(servers)) {
    for (const server of servers) {
      if (!isRecord(server) || typeof server.url !== 'string' || server.url === '') continue;
      const variables = isRecord(server.variables) ? server.variables : undefined;
      const url = variables
        ? server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
            const variable = variables[name];
            return isRecord(variable) && typeof variable.default === 'string' ? variable.default : whole;
          })
        : server.url;
      if (url.startsWith('http://') || url.startsWith('https://')) return url;
      if (specUrl !== undefined && URL.canParse(url, specUrl)) return new URL(url, specUrl).href;
    }
  }
  const basePath = normalizedBasePath(document.basePath);
  const spec = specUrl !== undefined && URL.canParse(specUrl) ? new URL(specUrl) : undefined;
  const scheme = (Array.isArray(document.schemes) ? document.schemes.find((s) => s === 'https' || s === 'http') : undefined) ?? spec?.protocol.replace(/:$/, '') ?? 'https';
  if (typeof document.host === 'string' && document.host !== '') return `${scheme}://${document.host}${basePath}`;
  if (spec === undefined) return undefined;
  const url = new URL(basePath || '/', spec.origin).href;
  return basePath === '' && url.endsWith('/') ? url.slice(0, -1) : url;
}

function normalizedBasePath(value: unknown): string {
  const path = typeof value === 'string' ? value.trim() : '';
  if (path === '' || path === '/') return '';
  return path.startsWith('/') ? path : `/${path}`;
}

async function boundedText(response: Response, connection: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  const tooLarge = () => new Error(`OpenAPI connection "${connection}": its spec is larger than ${MAX_SPEC_BYTES} bytes`);
  if (declared > MAX_SPEC_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body ?? []) {
    bytes += chunk.byteLength;
    if (bytes > MAX_SPEC_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && networkKind(host) === 'loopback');
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string } })?.cause;
  const message = error instanceof Error ? error.message : String(error);
  return cause?.code ? `${message} (${cause.code})` : message;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
