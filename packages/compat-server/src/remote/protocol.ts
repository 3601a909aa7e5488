import { z } from 'zod';
import { describeZodError } from '../http/errors.ts';
import { RequestError } from '../session/errors.ts';
import { isReservedAddress } from './network-address.ts';

/**
 * Eve's remote-agent protocol as a receiver serves it (`eve/dist/src/eve-channel/request.js`,
 * `channel/session-callback.js`): the fields a parent `defineRemoteAgent` sends with a create or a
 * follow-up, checked as Eve checks them.
 */
export const REMOTE_AGENT_PROTOCOL_VERSION = 2;
/** Parents of eve 0.66 to 0.68: no `protocolVersion`, a `taskId` in the callback. */
export const LEGACY_REMOTE_AGENT_PROTOCOL_VERSION = 1;
export type RemoteAgentProtocolVersion = typeof REMOTE_AGENT_PROTOCOL_VERSION | typeof LEGACY_REMOTE_AGENT_PROTOCOL_VERSION;

const CALLBACK_PATH = '/eve/v1/callback/';

/** The token at the end of a callback URL's path (`…/eve/v1/callback/<token>`), as Eve reads it. */
function tokenOfCallbackUrl(url: URL): string | null {
  const at = url.pathname.lastIndexOf(CALLBACK_PATH);
  if (at === -1) return null;
  const rest = url.pathname.slice(at + CALLBACK_PATH.length);
  if (rest.length === 0 || rest.includes('/')) return null;
  try {
    return decodeURIComponent(rest);
  } catch {
    return null;
  }
}

const bounded = z.string().min(1).max(2_048);

/** Where the parent wants its child's replies: strict, the URL's token equal to `token`, no private address. */
export const remoteCallback = z
  .strictObject({ callId: bounded, subagentName: bounded, token: bounded, url: z.string().min(1).max(4_096) })
  .superRefine((callback, context) => {
    let url: URL;
    try {
      url = new URL(callback.url);
    } catch {
      context.addIssue({ code: 'custom', message: 'Callback url must be absolute.', path: ['url'] });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') context.addIssue({ code: 'custom', message: 'Callback url must be http or https.', path: ['url'] });
    if (tokenOfCallbackUrl(url) !== callback.token) context.addIssue({ code: 'custom', message: 'Callback url token must match callback token.', path: ['url'] });
    if (isReservedAddress(url.hostname)) context.addIssue({ code: 'custom', message: 'Callback url host must not be a private or reserved address.', path: ['url'] });
  });
export type RemoteCallback = z.output<typeof remoteCallback>;

/** Who to tell about a turn, and how: what a create or follow-up with a `callback` asks for. */
export const remoteCaller = z.strictObject({
  callback: remoteCallback,
  protocolVersion: z.union([z.literal(REMOTE_AGENT_PROTOCOL_VERSION), z.literal(LEGACY_REMOTE_AGENT_PROTOCOL_VERSION)]),
  /** Protocol 1 only: the parent's task the events belong to. */
  taskId: bounded.optional(),
});
export type RemoteCaller = z.output<typeof remoteCaller>;

/** `capabilities`: Eve accepts `{ requestInput?: boolean }` and nothing else. */
export const capabilities = z.strictObject({ requestInput: z.boolean().optional() });

/**
 * Reads `callback` and `protocolVersion` (only looked at with a callback, as Eve does; absent, it
 * is `absentVersion`). A version this bridge does not serve is a 409 naming the version it serves.
 */
export function parseRemoteCaller(callback: unknown, protocolVersion: unknown, absentVersion: RemoteAgentProtocolVersion): RemoteCaller | undefined {
  if (callback === undefined) return undefined;
  let taskId: string | undefined;
  let fields = callback;
  if (typeof callback === 'object' && callback !== null && !Array.isArray(callback) && 'taskId' in callback) {
    const { taskId: legacy, ...rest } = callback as Record<string, unknown>;
    fields = rest;
    if (typeof legacy === 'string' && legacy.length > 0) taskId = legacy;
  }
  const parsed = remoteCallback.safeParse(fields);
  if (!parsed.success) throw new RequestError('invalid_request', `Invalid callback metadata: ${describeZodError(parsed.error)}`);
  if (protocolVersion !== undefined && typeof protocolVersion !== 'number') {
    throw new RequestError('invalid_request', "Expected 'protocolVersion' to be a number.");
  }
  const version = protocolVersion ?? (taskId !== undefined ? LEGACY_REMOTE_AGENT_PROTOCOL_VERSION : absentVersion);
  if (version !== REMOTE_AGENT_PROTOCOL_VERSION && version !== LEGACY_REMOTE_AGENT_PROTOCOL_VERSION) throw new ProtocolMismatchError(version);
  return { callback: parsed.data, protocolVersion: version, ...(version === LEGACY_REMOTE_AGENT_PROTOCOL_VERSION && taskId !== undefined ? { taskId } : {}) };
}

/** 409 `REMOTE_AGENT_PROTOCOL_MISMATCH`, with the version served, as Eve answers it. */
export class ProtocolMismatchError extends RequestError {
  constructor(callerVersion: number) {
    super(
      'REMOTE_AGENT_PROTOCOL_MISMATCH',
      `This deployment speaks eve remote agent protocol ${REMOTE_AGENT_PROTOCOL_VERSION}, but the caller speaks protocol ${String(callerVersion)}. Upgrade both deployments to the same eve release.`,
      { protocolVersion: REMOTE_AGENT_PROTOCOL_VERSION },
    );
  }
}
