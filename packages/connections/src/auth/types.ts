/** Whose sign-in a token belongs to: `principal:<id>`, or `session:<id>` for an anonymous caller. */
export type SubjectKey = string;

export function subjectKey(principalId: string | undefined, sessionId: string): SubjectKey {
  return principalId === undefined ? `session:${sessionId}` : `principal:${principalId}`;
}

/** What the bridge holds for one subject and connection. Never leaves the server. */
export interface TokenSet {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
  scope?: string;
  /** The authorization server that issued it: refreshes go back there only. */
  issuer: string;
  clientId: string;
  resource?: string;
}

/** A sign-in started and not yet finished: everything the callback needs, kept server side. */
export interface PendingFlow {
  /** Public: appears in the start URL and as the Eve `attemptId`. */
  id: string;
  /** SHA-256 (base64url) of the secret half of `state`. */
  secretHash: string;
  /** SHA-256 (base64url) of the browser binding cookie, once the start URL was opened. */
  bindingHash?: string;
  connection: string;
  /** Whose token the sign-in produces. */
  subject: SubjectKey;
  /** Where the start route sends the browser (the provider's authorization URL). */
  authorizationUrl: string;
  redirectUri: string;
  /** What the backend needs to finish, kept sealed with the flow. */
  backend: FlowData;
  createdAt: number;
  expiresAt: number;
}

import type { SignInOutcome } from '@eve-flue/session-contract';

/** What finishing a sign-in needs, by backend. */
export type FlowData =
  | { kind: 'oauth2'; verifier: string; issuer: string; clientId: string; resource?: string }
  | { kind: 'vercel-connect'; connector: string };

/** A client the bridge registered with an authorization server (RFC 7591). */
export interface RegisteredClient {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
}

export type { SignInOutcome } from '@eve-flue/session-contract';

/** How a sign-in's end reaches the instance whose turn is parked on it. */
export interface SignInEvents {
  publish(flowId: string, outcome: SignInOutcome): Promise<void>;
  subscribe(listener: (flowId: string, outcome: SignInOutcome) => void): () => void;
  close(): Promise<void>;
}
