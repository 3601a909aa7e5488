import type { Request, Response } from 'express';
import { sendRefusal } from '../http/refusal.ts';
import type { Site } from '../http/site.ts';

/**
 * Eve's HTTP checks for the MCP endpoint, before authentication: plain http only on loopback,
 * a `Host` that names the server, and (for the protocol requests, not the metadata) a browser
 * `Origin` that is exactly the server's own.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/** The JSON-RPC error body Eve's transport refuses with. */
export const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0' as const, error: { code, message }, id: null });

/** The origin requests are addressed to: the public URL's when the server knows it, else the request's own. */
export function requestOrigin(request: Request, publicUrl: string | undefined): string | undefined {
  if (publicUrl) return new URL(publicUrl).origin;
  const host = request.headers.host;
  if (!host || !URL.canParse(`${request.protocol}://${host}`)) return undefined;
  return new URL(`${request.protocol}://${host}`).origin;
}

function refuse(response: Response, message: string): false {
  sendRefusal(response, 'forbidden', message, { body: rpcError(-32000, message) });
  return false;
}

/** True when the request may go on; otherwise the refusal has been sent. */
export function guardRequest(request: Request, response: Response, site: Site | undefined, publicUrl: string | undefined, { checkOrigin }: { checkOrigin: boolean }): boolean {
  const host = request.headers.host;
  if (!host || !URL.canParse(`http://${host}`)) return refuse(response, 'Missing Host header');
  const hostname = new URL(`http://${host}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const origin = requestOrigin(request, publicUrl);
  if (!origin) return refuse(response, `Invalid Host header: ${host}`);
  if (new URL(origin).protocol !== 'https:' && !LOOPBACK.has(hostname)) return refuse(response, 'MCP endpoints require HTTPS except on loopback.');
  if (!checkOrigin) return true;
  const sent = request.headers.origin;
  if (sent === undefined || sent === '') return true;
  if (!URL.canParse(sent)) return refuse(response, 'Invalid Origin header.');
  const given = new URL(sent).origin;
  const own = site ? site.isOwnOrigin(given) : given === origin;
  return own || refuse(response, `Invalid Origin: ${given}`);
}
