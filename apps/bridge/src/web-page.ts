import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';

const CONTENT_SECURITY_POLICY =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The demo chat page at `/`: static files under a strict CSP. */
export function webPage(): Router {
  const router = express.Router();
  router.use((_request, response, next) => {
    response.set({ 'content-security-policy': CONTENT_SECURITY_POLICY, 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' });
    next();
  });
  // Mounted under a prefix, `/agents` must become `/agents/` for the page's relative links.
  router.get('/', (request, response, next) => {
    if (request.baseUrl === '' || request.originalUrl.split('?')[0] !== request.baseUrl) return next();
    response.redirect(301, `${request.baseUrl}/`);
  });
  router.use(express.static(fileURLToPath(new URL('./web/', import.meta.url)), { index: 'index.html' }));
  return router;
}
