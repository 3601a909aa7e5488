import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FlueConnectionDefinition } from '../definition.ts';
import { displayNameOf } from '../definition.ts';
import type { JsonRpcCall, UpstreamAuthorizer } from '../upstream-fetch.ts';
import { SignInError } from './backend.ts';
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
  /** The Flue name of the tool whose call is parked, when a tool call is. */
  toolName?: string;
}

/** The running turn of a session, as a connection sees it. */
export interface ParkingTurn {
  turnId: string;
  principalId?: string;
  /** Parks the turn on a sign-in until it settles; the turn reports it on the stream. */
  park(prompt: SignInPrompt): Promise<SignInOutcome>;
}

/** One session's view, handed to a connection mounted on that session's agent instance. */
export interface SessionScope {
  sessionId: string;
  turn(): ParkingTurn | undefined;
}

/**
 * Tokens for one connection on one session: the held token of the turn's caller; on a 401, one
 * refresh, then a sign-in that parks the turn. A sign-in that does not end authorized answers a
 * tool call with a tool error the model can explain, and anything else with the 401 itself.
 */
export function createConnectionAuthorizer(
  definition: Readonly<FlueConnectionDefinition>,
  broker: SignInBroker,
  scope: SessionScope,
  /** Told of each token a sign-in grants (the bridge lists the server's tools with it). */
  onAuthorized?: (token: string) => void,
): UpstreamAuthorizer {
  const subject = () => subjectKey(scope.turn()?.principalId, scope.sessionId);
  return {
    token: () => broker.token(definition.name, subject()),
    async unauthorized({ response, call, sentToken }) {
      if (sentToken) {
        const refreshed = await broker.afterRejection(definition.name, subject(), sentToken);
        if (refreshed && refreshed !== sentToken) return { retryWith: refreshed };
      }
      const turn = scope.turn();
      if (!turn) return { answer: response };
      const challenge = extractWWWAuthenticateParams(response);
      const displayName = displayNameOf(definition);
      let attempt;
      try {
        attempt = await broker.begin({
          connection: definition.name,
          subject: subject(),
          sessionId: scope.sessionId,
          turnId: turn.turnId,
          ...(turn.principalId !== undefined ? { principalId: turn.principalId } : {}),
          challenge: {
            ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
            ...(challenge.scope ? { scope: challenge.scope } : {}),
          },
        });
      } catch (error) {
        // No sign-in could be opened (e.g. discovery pointed at a private address): say why.
        if (!(error instanceof SignInError)) throw error;
        if (!call || call.method !== 'tools/call') return { answer: response };
        return { answer: toolError(call, `${displayName} cannot sign in: ${error.message}.`) };
      }
      const toolName = call?.method === 'tools/call' ? call.toolName : undefined;
      const outcome = await turn.park({
        connection: definition.name,
        displayName,
        description: `Authorization required for ${definition.name}`,
        attempt,
        callbackUrl: broker.redirectUri,
        ...(toolName ? { toolName } : {}),
      });
      if (outcome.outcome === 'authorized') {
        const token = await broker.token(definition.name, subject());
        if (token) {
          onAuthorized?.(token);
          return { retryWith: token };
        }
      }
      // Declined here (the person moved on, the turn was cancelled): the link must stop working.
      if (outcome.outcome === 'declined') await broker.cancel(attempt.id, outcome);
      const reason = outcome.outcome === 'authorized' ? 'no token was stored' : `${outcome.outcome}: ${outcome.reason}`;
      if (!call || call.method !== 'tools/call') return { answer: response };
      return { answer: toolError(call, `${displayName} is not connected (${reason}). The person can sign in and ask again.`) };
    },
  };
}

/** A JSON-RPC result carrying a tool error: the model sees why the call could not run. */
function toolError(call: JsonRpcCall, text: string): Response {
  return Response.json({ jsonrpc: '2.0', id: call.id, result: { content: [{ type: 'text', text }], isError: true } });
}
