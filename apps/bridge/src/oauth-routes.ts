import { Router, type Response } from 'express';
import { parseCookie } from 'cookie';
import { bindingCookieName, type SignInBroker } from '@eve-flue/connections';
import { BRIDGE_ROUTES, ERRORS, routePath } from '@eve-flue/eve-protocol';
import type { Logger } from '@eve-flue/compat-server';

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const RESULTS = {
  connected: { status: 200, title: 'Connected', text: 'You are signed in. You can close this tab and go back to your app.' },
  declined: { status: 200, title: 'Not connected', text: 'You declined the sign-in. You can close this tab.' },
  'timed-out': { status: 200, title: 'Not connected', text: 'The sign-in took too long. Ask again from your app.' },
  failed: { status: 200, title: 'Not connected', text: 'The sign-in could not be finished. Ask again from your app.' },
} as const;

/** A small page with no script, no external resource, and nothing from the request echoed. */
function page(response: Response, status: number, title: string, text: string): void {
  response
    .status(status)
    .set(PAGE_HEADERS)
    .type('html')
    .send(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><p id="result">${text}</p></html>`);
}

/**
 * The browser side of a sign-in (paths and cookies relative to where the bridge is mounted): the start link binds the browser and redirects to the provider;
 * the callback finishes the flow and redirects to a clean result page, so the code does not stay
 * in the address bar or history.
 */
export function oauthRoutes(broker: SignInBroker, logger: Logger, secureCookies: boolean, onSignIn: (outcome: string) => void = () => undefined): Router {
  const router = Router();

  router.get(BRIDGE_ROUTES.oauthStart, async (request, response) => {
    const flowId = String(request.params.attempt);
    const cookies = parseCookie(request.headers.cookie ?? '');
    const start = await broker.bindBrowser(flowId, (id) => cookies[bindingCookieName(id)]);
    if (start.kind === 'refused') {
      if (start.code === 'sign_in_taken') {
        logger.warn({}, 'refused a sign-in link opened in a second browser');
        return page(response, ERRORS[start.code].status, 'Sign-in refused', 'This sign-in link was already opened in another browser. Only that browser can finish it; ask again from your app if that was not you.');
      }
      return page(response, ERRORS[start.code].status, 'Sign-in not found', 'This sign-in link has expired or was already used. Ask again from your app.');
    }
    if (start.bindingSecret !== undefined) {
      response.cookie(bindingCookieName(flowId), start.bindingSecret, {
        httpOnly: true,
        sameSite: 'lax',
        secure: secureCookies,
        path: `${request.baseUrl}/oauth`,
        maxAge: start.maxAgeSeconds * 1000,
      });
    }
    // No body: express would echo the URL (and its state) into one.
    response.status(302).set(PAGE_HEADERS).location(start.authorizationUrl).end();
  });

  router.get(BRIDGE_ROUTES.oauthCallback, async (request, response) => {
    const callbackUrl = new URL(request.originalUrl, broker.redirectUri);
    const cookies = parseCookie(request.headers.cookie ?? '');
    const result = await broker.complete(callbackUrl, (flowId) => cookies[bindingCookieName(flowId)]);
    if (result.kind === 'refused') {
      logger.warn({ code: result.code }, 'refused an OAuth callback');
      onSignIn('refused');
      return page(response, ERRORS[result.code].status, 'Sign-in refused', result.message);
    }
    response.clearCookie(bindingCookieName(result.flowId), { path: `${request.baseUrl}/oauth` });
    const outcome = result.outcome.outcome === 'authorized' ? 'connected' : result.outcome.outcome;
    logger.info({ connection: result.connection, outcome }, 'sign-in finished');
    onSignIn(outcome);
    response.status(303).set(PAGE_HEADERS).location(`${request.baseUrl}${routePath(BRIDGE_ROUTES.oauthResult, { outcome })}`).end();
  });

  router.get(BRIDGE_ROUTES.oauthResult, (request, response) => {
    const outcome = String(request.params.outcome);
    // Own keys only: `__proto__` or `toString` must not reach the prototype.
    if (!Object.hasOwn(RESULTS, outcome)) return page(response, ERRORS.not_found.status, 'Not found', 'There is nothing here.');
    const result = RESULTS[outcome as keyof typeof RESULTS];
    page(response, result.status, result.title, result.text);
  });

  return router;
}
