import type { ReceivedPart } from '@eve-flue/eve-protocol';
import { RequestError } from '../session/errors.ts';
import type { MessageInput, UserFile } from '@eve-flue/session-contract';
import { checkTextBytes, type RequestLimits } from './limits.ts';
import type { MessageBody } from './schemas.ts';

export interface UploadPolicy {
  /** Largest decoded inline file, in bytes. */
  maxBytes: number;
  /** Allowed media types; `type/*` patterns match a whole family. Empty allows every type. */
  allowedMediaTypes: readonly string[];
}

export const DEFAULT_UPLOAD_POLICY: UploadPolicy = { maxBytes: 25 * 1024 * 1024, allowedMediaTypes: [] };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_URL = /^data:([^;,]*)(;[^,]*)?,(.*)$/s;

/** Turns the `message` of a request into what the agent receives, enforcing the upload policy and the limits. */
export function toMessageInput(body: MessageBody, policy: UploadPolicy, limits: RequestLimits, clientContext?: unknown): MessageInput {
  const parts: ReceivedPart[] = [];
  const files: UserFile[] = [];
  const texts: string[] = [];
  const items = typeof body === 'string' ? [{ type: 'text' as const, text: body }] : body;
  if (items.length > limits.maxParts) throw new RequestError('invalid_request', `message: more than ${limits.maxParts} parts.`);
  checkTextBytes(items.flatMap((item) => (item.type === 'text' ? [item.text] : [])), limits);
  for (const item of items) {
    if (item.type === 'text') {
      texts.push(item.text);
      parts.push({ type: 'text', text: item.text });
      continue;
    }
    const file = item.type === 'file' ? toFile(item.data, item.mediaType, item.filename) : toFile(item.image, item.mediaType ?? 'image/*');
    checkPolicy(file, policy);
    files.push(file);
    parts.push({
      type: 'file',
      mediaType: file.mediaType,
      ...(file.filename !== undefined ? { filename: file.filename } : {}),
      ...(file.data ? { size: file.data.byteLength } : {}),
      ...(file.url !== undefined ? { url: file.url } : {}),
    });
  }
  return { text: texts.join('\n'), parts, files, ...(clientContext !== undefined ? { clientContext } : {}) };
}

function toFile(data: string, mediaType: string, filename?: string): UserFile {
  const named = filename === undefined ? {} : { filename };
  const dataUrl = DATA_URL.exec(data);
  if (dataUrl) {
    const [, type, params = '', payload = ''] = dataUrl;
    const bytes = params.split(';').includes('base64') ? decodeBase64(payload) : decodePercent(payload);
    return { mediaType: type || mediaType, data: bytes, ...named };
  }
  if (/^https?:\/\//i.test(data)) {
    try {
      return { mediaType, url: new URL(data).href, ...named };
    } catch {
      throw new RequestError('invalid_request', 'message: a file part has an invalid URL.');
    }
  }
  return { mediaType, data: decodeBase64(data), ...named };
}

function decodePercent(payload: string): Uint8Array {
  try {
    return Buffer.from(decodeURIComponent(payload));
  } catch {
    throw new RequestError('invalid_request', 'message: a data: URL has an invalid percent-encoding.');
  }
}

function decodeBase64(payload: string): Uint8Array {
  const compact = payload.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw new RequestError('invalid_request', 'message: file data must be base64, a data: URL, or a URL.');
  return Buffer.from(compact, 'base64');
}

function checkPolicy(file: UserFile, policy: UploadPolicy): void {
  if (file.data && file.data.byteLength > policy.maxBytes) {
    throw new RequestError('payload_too_large', `A file is larger than the ${policy.maxBytes}-byte upload limit.`);
  }
  if (policy.allowedMediaTypes.length > 0 && !policy.allowedMediaTypes.some((allowed) => mediaTypeMatches(allowed, file.mediaType))) {
    throw new RequestError('unsupported_media_type', `Files of type ${file.mediaType} are not accepted.`);
  }
}

function mediaTypeMatches(pattern: string, mediaType: string): boolean {
  const type = mediaType.toLowerCase().split(';')[0]!.trim();
  const want = pattern.toLowerCase();
  return want.endsWith('/*') ? type.startsWith(want.slice(0, -1)) : type === want;
}
