import express, { type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import { errors, type Interaction } from 'oidc-provider';
import { consentPage, errorPage, type HtmlPage } from './authorization-pages.ts';

/** The only account of the demo authorization server. */
export const DEMO_ACCOUNT_ID = 'demo-user';

/** Set on the login result, so the consent prompt that follows needs no second click. */
const APPROVED = 'demoApproved';

interface MissingGrants {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

/** The demo's sign-in and consent: one page that signs in `demo-user` and grants what the client asks for. */
export function demoInteractionRoutes(provider: Provider): express.Router {
  const router = express.Router();

  router.get('/interaction/:uid', async (request, response) => {
    const details = await currentInteraction(provider, request, response);
    if (details.prompt.name === 'consent' && details.lastSubmission?.[APPROVED] === true) {
      await grantConsent(provider, details, request, response);
      return;
    }
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) throw new errors.InvalidClient('the client is not registered');
    const redirectUris = typeof details.params.redirect_uri === 'string' ? [details.params.redirect_uri] : (client.redirectUris ?? []);
    const resource = details.params.resource;
    send(
      response,
      consentPage({
        action: `/interaction/${encodeURIComponent(details.uid)}`,
        accountId: details.session?.accountId ?? DEMO_ACCOUNT_ID,
        clientName: client.clientName ?? client.clientId,
        scopes: String(details.params.scope ?? '').split(' ').filter(Boolean),
        resources: typeof resource === 'string' ? [resource] : Array.isArray(resource) ? resource.map(String) : [],
        redirectOrigins: originsOf(redirectUris),
      }),
    );
  });

  router.post('/interaction/:uid', express.urlencoded({ extended: false }), async (request, response) => {
    const details = await currentInteraction(provider, request, response);
    const decision: unknown = request.body?.decision;
    if (decision === 'deny') {
      const denied = { error: 'access_denied', error_description: 'The user denied access.' };
      await provider.interactionFinished(request, response, denied, { mergeWithLastSubmission: false });
    } else if (decision !== 'approve') {
      send(response.status(400), errorPage('invalid_request', 'Choose Approve or Deny.'));
    } else if (details.prompt.name === 'login') {
      const signedIn = { login: { accountId: DEMO_ACCOUNT_ID }, [APPROVED]: true };
      await provider.interactionFinished(request, response, signedIn, { mergeWithLastSubmission: false });
    } else if (details.prompt.name === 'consent') {
      await grantConsent(provider, details, request, response);
    } else {
      send(response.status(400), errorPage('invalid_request', `The demo cannot handle the "${details.prompt.name}" prompt.`));
    }
  });

  router.use('/interaction', ((error, _request, response, _next) => {
    const known = error instanceof errors.OIDCProviderError;
    if (!known) console.error('[demo authorization server] interaction failed:', error instanceof Error ? error.message : error);
    const page = known ? errorPage(error.error, error.error_description) : errorPage('server_error', undefined);
    send(response.status(known ? error.statusCode : 500), page);
  }) satisfies express.ErrorRequestHandler);

  return router;
}

/** The interaction named by the browser's cookie, which must be the one in the URL. */
async function currentInteraction(provider: Provider, request: Request, response: Response): Promise<Interaction> {
  const details = await provider.interactionDetails(request, response);
  if (details.uid !== request.params.uid) throw new errors.SessionNotFound('the interaction does not match this page');
  return details;
}

async function grantConsent(provider: Provider, details: Interaction, request: Request, response: Response): Promise<void> {
  const { params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session?.accountId, clientId: String(params.client_id) });
  if (!grant) throw new errors.SessionNotFound('the grant has expired');
  const missing = details.prompt.details as MissingGrants;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(request, response, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
}

function originsOf(uris: readonly string[]): string[] {
  const origins = uris.map((uri) => URL.parse(uri)?.origin).filter((origin): origin is string => origin !== undefined && origin !== 'null');
  return [...new Set(origins)];
}

function send(response: Response, page: HtmlPage): void {
  response.set(page.headers).send(page.body);
}
