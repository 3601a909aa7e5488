/**
 * Why a server could not be used, in one line with its precise cause: the HTTP status and the
 * server's own message where the error chain carries them (MCP SDK errors keep the status in
 * `code` or `data.status` and may carry an empty text), else the network error's code.
 */
export function describeFailure(error: unknown): string {
  const chain = [...causes(error)];
  const status = failureStatus(error);
  const messages = [
    ...new Set(
      chain
        .map((e) => (e instanceof Error ? e.message : typeof e === 'string' ? e : ''))
        .map((m) => serverWords(m.replace(/^(Streamable HTTP error: )?Error POSTing to endpoint( \(HTTP \d+\))?:\s*/, '').trim()))
        .filter((m) => m !== ''),
    ),
  ];
  const message = messages.join(': ');
  // A network error's code (ECONNREFUSED, UND_ERR_…), not a library's own names for its errors.
  const code = chain.map((e) => (e as { code?: unknown })?.code).find((c): c is string => typeof c === 'string' && /^(E[A-Z0-9]+|UND_ERR_[A-Z_]+)$/.test(c));
  const withCode = code && !message.includes(code) ? `${message} (${code})`.trim() : message;
  const prefix = status !== undefined && !message.includes(`HTTP ${status}`) ? `HTTP ${status}` : '';
  return [prefix, withCode].filter(Boolean).join(': ') || 'unknown error';
}

/** A JSON error body reduced to its message (JSON-RPC `error.message`, or `error`), else the text as it is. */
function serverWords(text: string): string {
  if (!text.startsWith('{')) return text;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | unknown; message?: unknown };
    const said = typeof body.error === 'object' && body.error !== null ? (body.error as { message?: unknown }).message : (body.error ?? body.message);
    return typeof said === 'string' ? said : text;
  } catch {
    return text;
  }
}

/** The HTTP status anywhere in an error's cause chain. */
export function failureStatus(error: unknown): number | undefined {
  return [...causes(error)].map(httpStatusOf).find((s) => s !== undefined);
}

function* causes(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  for (let current = error; current !== undefined && current !== null && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    yield current;
    if (typeof current !== 'object') return;
  }
}

function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, code, data } = error as { status?: unknown; code?: unknown; data?: { status?: unknown } };
  for (const value of [status, data?.status, code]) if (typeof value === 'number' && value >= 100 && value < 600) return value;
  return undefined;
}
