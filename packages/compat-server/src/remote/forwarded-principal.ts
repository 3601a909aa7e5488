import { z } from 'zod';
import { PRINCIPAL_TYPES, type Principal, type PrincipalType } from '@eve-flue/session-contract';
import { describeZodError } from '../http/errors.ts';
import { RequestError } from '../session/errors.ts';

/** The attribute Eve stamps on a forwarded principal: who forwarded it. */
export const FORWARDED_BY_ATTRIBUTE = 'eve:forwarded-by';

const bounded = z.string().min(1).max(1_024);
/** One principal as Eve's parent forwards it (`session.auth.current`), strict as Eve reads it. */
const forwardedContext = z.strictObject({
  attributes: z.record(bounded, z.union([z.string().max(4_096), z.array(z.string().max(4_096)).max(64)])),
  authenticator: bounded,
  issuer: bounded.optional(),
  principalId: bounded,
  principalType: bounded,
  subject: bounded.optional(),
});
export type ForwardedPrincipalContext = z.output<typeof forwardedContext>;

const forwardedPrincipal = z.strictObject({ current: forwardedContext, initiator: forwardedContext.optional() });

/** What a forwarder asserts, stamped with who forwarded it: the second argument of `trustedForwarders`. */
export interface ForwardedAssertion {
  principal: { current: ForwardedPrincipalContext; initiator: ForwardedPrincipalContext };
}

/**
 * Decides whether the route-authenticated caller (`forwarder`) may run turns as the principal it
 * asserts. Absent, every forwarded principal is refused (403).
 */
export type TrustedForwarders = (forwarder: Principal, assertion: ForwardedAssertion) => boolean | Promise<boolean>;

function stamp(context: ForwardedPrincipalContext, forwarderId: string): ForwardedPrincipalContext {
  return { ...context, attributes: { ...context.attributes, [FORWARDED_BY_ATTRIBUTE]: forwarderId } };
}

const isPrincipalType = (type: string): type is PrincipalType => (PRINCIPAL_TYPES as readonly string[]).includes(type);

/** The bridge's principal for Eve's forwarded one (a type the bridge does not know is a service), stamped with its forwarder. */
const toPrincipal = (context: ForwardedPrincipalContext, forwarderId: string): Principal => ({
  id: context.principalId,
  type: isPrincipalType(context.principalType) ? context.principalType : 'service',
  ...(context.issuer !== undefined ? { issuer: context.issuer } : {}),
  ...(context.subject !== undefined ? { subject: context.subject } : {}),
  attributes: context.attributes,
  forwardedBy: forwarderId,
});

/**
 * The principal a request's turn runs as: the route-authenticated caller, or, with a
 * `forwardedPrincipal` that `trustedForwarders` accepts, the asserted `current` principal stamped
 * with who forwarded it. As Eve: 403 without `trustedForwarders` or when it refuses, 400 for a
 * malformed assertion.
 */
export async function resolveForwardedPrincipal(
  asserted: unknown,
  forwarder: Principal,
  trustedForwarders: TrustedForwarders | undefined,
): Promise<Principal> {
  if (!trustedForwarders) throw new RequestError('forbidden', 'This deployment does not accept a forwarded principal.');
  const parsed = forwardedPrincipal.safeParse(asserted);
  if (!parsed.success) throw new RequestError('invalid_request', `Invalid forwardedPrincipal metadata: ${describeZodError(parsed.error)}`);
  const current = stamp(parsed.data.current, forwarder.id);
  const initiator = parsed.data.initiator === undefined ? current : stamp(parsed.data.initiator, forwarder.id);
  let trusted: boolean;
  try {
    trusted = (await trustedForwarders(forwarder, { principal: { current, initiator } })) === true;
  } catch {
    throw new RequestError('forbidden', 'trustedForwarders refused the forwarder (it threw).');
  }
  if (!trusted) throw new RequestError('forbidden', 'Caller is not authorized to assert a forwarded principal.');
  return toPrincipal(current, forwarder.id);
}
