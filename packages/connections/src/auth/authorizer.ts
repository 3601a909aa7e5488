import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Principal } from '@eve-flue/session-contract';
import type { FlueConnectionDefinition } from '../definition.ts';
import { displayNameOf } from '../definition.ts';
import { flueToolName } from '../naming.ts';
import type { JsonRpcCall } from '../json-rpc.ts';
import type { UpstreamAuthorizer } from '../upstream-fetch.ts';
import { SignInError, type UpstreamChallenge } from './backend.ts';
import type { SignInAttempt, SignInBroker } from './broker.ts';
import { subjectKey, type SignInOutcome } from './types.ts';

/** What a parked turn shows about a sign-in: Eve's challenge, never a secret. */
export interface SignInPrompt {
  connection: string;
  displayName: string;
  description: string;
  attempt: SignInAttempt;
  /** The bridge's callback URL, Eve's `webhookUrl`: the sign-in finishes there. */
  callbackUrl: string;
  /** The Flue name of the tool whose call is parked. */
  toolName?: string;
}

/** The running turn of a session, as a connection sees it. */
export interface ParkingTurn {
  turnId: string;
  /** Who sent the turn's message; undefined for an anonymous caller. */
  principal?: Principal;
  /** Parks the turn on a sign-in until it settles; the turn reports it on the stream. */
  park(prompt: SignInPrompt): Promise<SignInOutcome>;
}

/** One session's view, handed to a connection mounted on that session's agent instance. */
export interface SessionScope {
  sessionId: string;
  turn(): ParkingTurn | undefined;
}

/** A connection's tokens on one session, and the sign-in a tool call can start. */
export interface ConnectionAuthorizer extends UpstreamAuthorizer {
  /**
   * Runs a sign-in for the running turn (the connection's stand-in tool was called): parks the
   * turn until it settles and says how it went. `toolName` is the Flue name of the parked call.
   */
  signIn(toolName: string): Promise<SignInOutcome>;
  /** How many answers so far were 401s handed back to a connect or listing (not a tool call). */
  readonly refusals: number;
}

/**
 * Tokens for one connection on one session: the held token of the turn's caller; on a 401, one
 * refresh. Only a tool call goes on to a sign-in that parks the turn: connecting and listing
 * tools never do (a turn that uses no tool of the connection never parks), they remember where
 * to sign in for the stand-in tool. A sign-in that does not end authorized answers the tool call
 * with a tool error the model can explain.
 */
export function createConnectionAuthorizer(
  definition: Readonly<FlueConnectionDefinition>,
  broker: SignInBroker,
  scope: SessionScope,
  /** Told of each token a sign-in grants (the bridge lists the server's tools with it). */
  onAuthorized?: (token: string) => void,
  /** Told when a sign-in cannot start, with a reason safe to show. */
  onSignInFailed?: (reason: string) => void,
): ConnectionAuthorizer {
  const subject = () => subjectKey(scope.turn()?.principal?.id, scope.sessionId);
  const displayName = displayNameOf(definition);
  /** Where this connection's requests go: tokens issued for another resource are not sent there. */
  const audience = definition.auth?.type === 'oauth2' ? (definition.auth.resource ?? definition.url) : definition.url;
  const heldToken = () => broker.token(definition.name, subject(), audience);
  /** What the server's last 401 said about where to sign in. */
  let challenge: UpstreamChallenge = {};
  const signIn = async (toolName: string | undefined): Promise<SignInOutcome> => {
    const turn = scope.turn();
    if (!turn) return { outcome: 'failed', reason: 'no turn is running to sign in from' };
    let attempt: SignInAttempt;
    try {
      attempt = await broker.begin({
        connection: definition.name,
        subject: subject(),
        sessionId: scope.sessionId,
        turnId: turn.turnId,
        ...(turn.principal !== undefined ? { principalId: turn.principal.id } : {}),
        challenge,
      });
    } catch (error) {
      // Nothing to sign in to (e.g. the metadata names another resource): the turn does not park.
      if (!(error instanceof SignInError)) throw error;
      onSignInFailed?.(error.message);
      return { outcome: 'failed', reason: error.message };
    }
    const outcome = await turn.park({
      connection: definition.name,
      displayName,
      description: `Authorization required for ${definition.name}`,
      attempt,
      callbackUrl: broker.redirectUri,
      ...(toolName ? { toolName } : {}),
    });
    // Declined here (the person moved on, the turn was cancelled): the link must stop working.
    if (outcome.outcome === 'declined') await broker.cancel(attempt.id, outcome);
    if (outcome.outcome !== 'authorized') return outcome;
    const token = await heldToken();
    if (!token) return { outcome: 'failed', reason: 'no token was stored' };
    onAuthorized?.(token);
    return outcome;
  };
  let refusals = 0;
  return {
    token: heldToken,
    signIn,
    get refusals() {
      return refusals;
    },
    async unauthorized({ response, call, sentToken }) {
      if (sentToken) {
        const refreshed = await broker.afterRejection(definition.name, subject(), sentToken);
        if (refreshed && refreshed !== sentToken) return { retryWith: refreshed };
        // The token is gone for good (no refresh): ask again as a caller without one; only a tool
        // call that still meets a 401 then leads to a sign-in.
        if (!refreshed) return { retryWith: '' };
      }
      const said = extractWWWAuthenticateParams(response);
      challenge = {
        ...(said.resourceMetadataUrl ? { resourceMetadataUrl: said.resourceMetadataUrl } : {}),
        ...(said.scope ? { scope: said.scope } : {}),
      };
      if (call?.method !== 'tools/call' || !scope.turn()) {
        refusals++;
        return { answer: response };
      }
      const outcome = await signIn(call.toolName && flueToolName(definition.name, call.toolName));
      if (outcome.outcome === 'authorized') {
        const token = await heldToken();
        if (token) return { retryWith: token };
      }
      const reason = outcome.outcome === 'authorized' ? 'no token was stored' : `${outcome.outcome}: ${outcome.reason}`;
      return { answer: toolError(call, `${displayName} is not connected (${reason}). The person can sign in and ask again.`) };
    },
  };
}

const toolErrors = new WeakSet<Response>();

/** A JSON-RPC result carrying a tool error: the model sees why the call could not run. */
function toolError(call: JsonRpcCall, text: string): Response {
  const response = Response.json({ jsonrpc: '2.0', id: call.id, result: { content: [{ type: 'text', text }], isError: true } });
  toolErrors.add(response);
  return response;
}

/** Whether an answer is the authorizer's own tool error (a sign-in that did not end authorized), not the server's. */
export function isToolErrorAnswer(response: Response): boolean {
  return toolErrors.has(response);
}
