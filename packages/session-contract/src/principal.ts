import { z } from 'zod';

/**
 * What kind of caller a principal is, as Eve's route auth names it: `user` (a person, e.g. an
 * HTTP Basic user), `service` (a JWT or OIDC caller), `runtime` (the deployment itself),
 * `local-dev` (Eve's `localDev()`), `anonymous` (Eve's `none()`).
 */
export const PRINCIPAL_TYPES = ['user', 'service', 'runtime', 'local-dev', 'anonymous'] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

/**
 * Who is calling, in Eve's shape (`session.auth.current`: `principalId`, `principalType`,
 * `issuer`, `subject`, `attributes`). `id` is stable for a person or service; sign-ins, tokens
 * and session ownership are keyed by it. For a token (OIDC, JWT) it is `<iss>:<sub>`, so the same
 * subject from two issuers is never the same principal.
 */
export interface Principal {
  id: string;
  type: PrincipalType;
  /** The token's `iss`, for token callers. */
  issuer?: string;
  /** The token's `sub`, for token callers. */
  subject?: string;
  /** The token's other claims (Eve's `attributes`). */
  attributes?: Readonly<Record<string, unknown>>;
  /** Set when a trusted forwarder asserted this principal (Eve's `forwardPrincipal`): the forwarder's id. */
  forwardedBy?: string;
}

/** A principal as it crosses between instances (forwarded commands). */
export const principalSchema = z.strictObject({
  id: z.string().min(1),
  type: z.enum(PRINCIPAL_TYPES),
  issuer: z.string().optional(),
  subject: z.string().optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
  forwardedBy: z.string().min(1).optional(),
});
