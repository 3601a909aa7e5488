import type { CredentialContext, CredentialValue, FlueConnectionDefinition } from './definition.ts';

/** A credential resolver failed or gave nothing usable. The message names the field, never a value. */
export class CredentialError extends Error {
  override name = 'CredentialError';
}

/**
 * The headers a connection adds to one upstream request for `ctx`: its `headers` (functions
 * resolved now) and, for `auth: { type: 'bearer' }`, `Authorization: Bearer <token>`. An empty
 * value sends no header. The values go into the request and nowhere else.
 */
export async function credentialHeaders(
  definition: Pick<Readonly<FlueConnectionDefinition>, 'name' | 'headers' | 'auth'>,
  ctx: CredentialContext,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(definition.headers ?? {})) {
    const resolved = await resolve(value, ctx, definition.name, `headers.${name}`);
    if (resolved) headers[name.toLowerCase()] = resolved;
  }
  if (definition.auth?.type === 'bearer') {
    const token = await resolve(definition.auth.token, ctx, definition.name, 'auth.token');
    if (token) headers.authorization = `Bearer ${token}`;
  }
  return headers;
}

/** Whether the connection brings a credential of its own (bearer token or headers), as opposed to a sign-in. */
export function hasStaticCredential(definition: Pick<Readonly<FlueConnectionDefinition>, 'headers' | 'auth'>): boolean {
  return definition.auth?.type === 'bearer' || Object.keys(definition.headers ?? {}).length > 0;
}

/** Whether the connection's credential depends on the caller (a function `auth.token` or header): its status is each caller's own. */
export function hasCallerCredential(definition: Pick<Readonly<FlueConnectionDefinition>, 'headers' | 'auth'>): boolean {
  return (definition.auth?.type === 'bearer' && typeof definition.auth.token === 'function') || Object.values(definition.headers ?? {}).some((value) => typeof value === 'function');
}

async function resolve(value: CredentialValue, ctx: CredentialContext, connection: string, field: string): Promise<string> {
  let resolved: unknown;
  try {
    resolved = typeof value === 'function' ? await value({ ...ctx }) : value;
  } catch (error) {
    throw new CredentialError(`[eve-flue] connection "${connection}": \`${field}\` could not be resolved${ctx.principal === undefined ? ' without a caller' : ''}`, { cause: error });
  }
  if (typeof resolved !== 'string') throw new CredentialError(`[eve-flue] connection "${connection}": \`${field}\` must resolve to a string`);
  if (/[\r\n]/.test(resolved)) throw new CredentialError(`[eve-flue] connection "${connection}": \`${field}\` resolved to a value with a line break`);
  return resolved;
}
