import { createHash } from 'node:crypto';

const CSS = [
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f4f5;color:#18181b}',
  'main{max-width:28rem;margin:4rem auto;padding:1.5rem 2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}',
  'h1{font-size:1.25rem}code{background:#f4f4f5;padding:0 .25rem;border-radius:3px;word-break:break-all}',
  'form{display:flex;gap:.75rem;margin-top:1.5rem}',
  'button{font:inherit;padding:.5rem 1.25rem;border-radius:6px;border:1px solid #a1a1aa;background:#fff;cursor:pointer}',
  'button[value=approve]{background:#18181b;border-color:#18181b;color:#fff}',
].join('');
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;

export interface ConsentPage {
  /** Where the form posts, `/interaction/<uid>`. */
  action: string;
  accountId: string;
  clientName: string;
  scopes: readonly string[];
  resources: readonly string[];
  /** Origins the browser may be redirected to after the form posts. */
  redirectOrigins: readonly string[];
}

export interface HtmlPage {
  headers: Record<string, string>;
  body: string;
}

/** The one-click Approve / Deny page. */
export function consentPage(page: ConsentPage): HtmlPage {
  const list = (items: readonly string[]) => `<ul>${items.map((item) => `<li><code>${escapeHtml(item)}</code></li>`).join('')}</ul>`;
  const client = escapeHtml(page.clientName);
  const body = [
    `<h1>Authorize ${client}</h1>`,
    `<p>Signed in as <strong>${escapeHtml(page.accountId)}</strong> (demo account).</p>`,
    `<p><strong>${client}</strong> asks for these scopes:</p>`,
    page.scopes.length ? list(page.scopes) : '<p>(no scopes)</p>',
    page.resources.length ? `<p>to use:</p>${list(page.resources)}` : '',
    `<form method="post" action="${escapeHtml(page.action)}">`,
    '<button type="submit" name="decision" value="approve" autofocus>Approve</button>',
    '<button type="submit" name="decision" value="deny">Deny</button>',
    '</form>',
  ].join('\n');
  // Chromium applies form-action to the redirects that follow the POST too, so the client's origin must be allowed.
  return htmlPage(`Authorize ${page.clientName}`, body, ["'self'", ...page.redirectOrigins].join(' '));
}

/** The page oidc-provider shows when it cannot redirect an error back to the client. */
export function errorPage(error: string, description: string | undefined): HtmlPage {
  const detail = description ? `<p>${escapeHtml(description)}</p>` : '';
  return htmlPage('Authorization error', `<h1>Authorization error</h1>\n<p><code>${escapeHtml(error)}</code></p>\n${detail}`, "'none'");
}

function htmlPage(title: string, body: string, formAction: string): HtmlPage {
  return {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': [
        "default-src 'none'",
        `style-src ${STYLE_SOURCE}`,
        `form-action ${formAction}`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
    body: [
      '<!doctype html>',
      '<html lang="en">',
      '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>${escapeHtml(title)}</title><style>${CSS}</style></head>`,
      `<body><main>\n${body}\n</main></body>`,
      '</html>',
    ].join('\n'),
  };
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
