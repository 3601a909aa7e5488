import { RequestError } from '../session/errors.ts';

/**
 * What one request may carry. Every default lives here; `CompatServerOptions.limits` overrides
 * them one by one. docs/security.md lists them with the tests that prove them.
 */
export interface RequestLimits {
  /** Total UTF-8 bytes of text in one message (its text parts together, or input-response texts). Default 1 MiB (413). */
  maxTextBytes: number;
  /** Parts in one message. Default 100 (400). */
  maxParts: number;
  /** How deeply arrays and objects may nest in a JSON body. Default 32 (400). */
  maxDepth: number;
  /**
   * Bytes of one JSON body after decompression, checked against `content-length` before reading
   * and while reading (never held past it; the connection is closed). Default: the file cap as base64 plus `maxTextBytes` plus 64 KiB (413).
   */
  maxBodyBytes: number;
}

/** Room for the JSON around a message: keys, ids, `clientContext`, an `outputSchema`. */
const ENVELOPE_BYTES = 64 * 1024;

export const DEFAULT_MAX_TEXT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_PARTS = 100;
export const DEFAULT_MAX_DEPTH = 32;

/** The limits in force: the defaults, with the body cap derived from the file cap unless given. */
export function resolveLimits(maxFileBytes: number, overrides: Partial<RequestLimits> = {}): RequestLimits {
  const maxTextBytes = overrides.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  return {
    maxTextBytes,
    maxParts: overrides.maxParts ?? DEFAULT_MAX_PARTS,
    maxDepth: overrides.maxDepth ?? DEFAULT_MAX_DEPTH,
    maxBodyBytes: overrides.maxBodyBytes ?? 4 * Math.ceil(maxFileBytes / 3) + maxTextBytes + ENVELOPE_BYTES,
  };
}

/** Refuses (413) texts whose UTF-8 bytes together pass `maxTextBytes`. */
export function checkTextBytes(texts: Iterable<string>, limits: RequestLimits): void {
  let total = 0;
  for (const text of texts) total += Buffer.byteLength(text);
  if (total > limits.maxTextBytes) {
    throw new RequestError('payload_too_large', `The message text is larger than the ${limits.maxTextBytes}-byte limit.`);
  }
}

/**
 * Refuses a JSON body nested deeper than `maxDepth`, before it is parsed (a deep body would
 * otherwise overflow the stack in whatever walks it later). Brackets inside strings do not count.
 */
export function checkDepth(body: Buffer, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === 0x5c) i++; // backslash: skip the escaped byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > maxDepth) throw new RequestError('invalid_request', `The request body nests deeper than ${maxDepth} levels.`);
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
}
