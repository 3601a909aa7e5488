import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import { errorBody } from '@eve-flue/eve-protocol';
import { RequestError } from '../session/errors.ts';
import { checkDepth, type RequestLimits } from './limits.ts';
import { sendRefusal } from './refusal.ts';

/**
 * How long a refused sender gets to read its 413 before the connection is cut. Meanwhile what it
 * still sends is read and dropped: a socket closed on unread data resets, and the reset can
 * destroy the 413 before the sender reads it.
 */
const REFUSAL_GRACE_MS = 5_000;

export function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Reads an `application/json` body into `request.body`, within `maxBodyBytes` (counted after
 * decompression) and `maxDepth`. A body over the limit is never held: a `content-length` over it
 * is refused before a byte is read, a longer stream as soon as it passes the limit, with a 413
 * and the connection closed (body-parser would read such a body to its end before answering).
 */
export function readJsonBody(limits: RequestLimits, tooLargeBody: (maxBodyBytes: number) => unknown = tooLargeErrorBody): RequestHandler {
  return (request, response, next) => {
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (!hasBody || !isJson(request.headers['content-type'])) return next();
    if (Number(request.headers['content-length']) > limits.maxBodyBytes) return refuseTooLarge(request, response, tooLargeBody(limits.maxBodyBytes));
    const charset = /;\s*charset\s*=\s*"?([^";]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.trim().toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return next(new RequestError('unsupported_media_type', 'Send JSON as UTF-8.'));
    }
    const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const decoder = encoding !== 'identity' && Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding] : undefined;
    if (encoding !== 'identity' && !decoder) return next(new RequestError('unsupported_media_type', 'The request body encoding is not supported.'));
    const source: Readable = decoder ? (request.pipe(decoder()) as unknown as Readable) : request;

    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      next(error);
    };
    source.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limits.maxBodyBytes) {
        settled = true;
        chunks.length = 0;
        refuseTooLarge(request, response, tooLargeBody(limits.maxBodyBytes));
        return;
      }
      chunks.push(chunk);
    });
    source.on('error', () => settle(new RequestError('invalid_request', 'The request body could not be decoded.')));
    request.on('aborted', () => settle(new RequestError('invalid_request', 'The request body was not sent completely.')));
    source.on('end', () => {
      if (settled) return;
      try {
        request.body = parse(Buffer.concat(chunks), limits);
      } catch (error) {
        return settle(error);
      }
      settle();
    });
  };
}

function parse(bytes: Buffer, limits: RequestLimits): unknown {
  if (bytes.length === 0) return {};
  checkDepth(bytes, limits.maxDepth);
  const text = bytes.toString('utf8');
  // Objects and arrays only, as body-parser's strict mode.
  if (!/^[\s]*[[{]/.test(text)) throw new RequestError('invalid_json', 'The request body is not a JSON object or array.');
  try {
    return JSON.parse(text);
  } catch {
    throw new RequestError('invalid_json', 'The request body is not valid JSON.');
  }
}

const tooLargeErrorBody = (maxBodyBytes: number) => errorBody('payload_too_large', `The request body is larger than the ${maxBodyBytes}-byte limit.`);

function refuseTooLarge(request: Request, response: Response, body: unknown): void {
  request.unpipe();
  request.resume();
  sendRefusal(response, 'payload_too_large', 'The request body is too large.', { body });
  // Not `connection: close`: Node would close the socket as soon as the 413 is written, while the
  // sender is still writing, and the sender would see a reset instead of the answer. A sender that
  // is still sending when the grace ends is cut off.
  const cut = setTimeout(() => request.socket.destroy(), REFUSAL_GRACE_MS).unref();
  request.once('end', () => clearTimeout(cut));
}
