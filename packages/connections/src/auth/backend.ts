import type { SignInFailure } from '@eve-flue/session-contract';
import type { FlowData, SubjectKey, TokenSet } from './types.ts';

/** What an upstream 401 said about where to sign in (RFC 9728 / RFC 6750). */
export interface UpstreamChallenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

/** A sign-in that could not finish, with an outcome for Eve and a reason safe to show anyone. */
export class SignInError extends Error {
  readonly outcome: SignInFailure['outcome'];
  constructor(outcome: SignInFailure['outcome'], reason: string) {
    super(reason);
    this.name = 'SignInError';
    this.outcome = outcome;
  }
}

/** Whose tokens, and the redirect URI the bridge's client was registered with. */
export interface TokenContext {
  subject: SubjectKey;
  redirectUri: string;
}

/** A way to get a connection's tokens: openid-client's code flow, or Vercel Connect. */
export interface SignInBackend {
  /** The provider URL to send the browser to, and what finishing needs (kept sealed in the flow). */
  begin(input: { subject: SubjectKey; redirectUri: string; state: string; challenge?: UpstreamChallenge }): Promise<{
    authorizationUrl: string;
    data: FlowData;
  }>;
  /** Tokens from the provider's redirect back to the bridge; throws SignInError. */
  finish(input: { subject: SubjectKey; callbackUrl: URL; state: string; data: FlowData; redirectUri: string }): Promise<TokenSet>;
  refresh(tokens: TokenSet, context: TokenContext): Promise<TokenSet>;
  /** Revokes at the provider; true only when a revocation request was made and succeeded. */
  revoke(tokens: TokenSet, context: TokenContext): Promise<boolean>;
  /**
   * Whether the provider's redirect back carries an OAuth `code` the broker must see. `false` for
   * Vercel Connect, which does the code exchange itself and returns only the bridge's `state`.
   * Default `true`.
   */
  readonly requiresCode?: boolean;
  /** A token the backend already holds for the subject (Connect keeps tokens itself). */
  lookup?(subject: SubjectKey): Promise<TokenSet | undefined>;
}
