/**
 * Why a server could not be used, in one line with its precise cause: the HTTP status and the
 * server's own message where the error chain carries them (MCP SDK errors keep the status in
 * `code` or `data.status` and may carry an empty text), else the network error's code.
 */
export function describeFailure(error: unknown): string {
  const chain = [...causes(error)];
  const status = chain.map(httpStatusOf).find((s) => s !== undefined);
  const message = chain
    .map((e) => (e instanceof Error ? e.message : typeof e === 'string' ? e : ''))
    .map((m) => m.replace(/^(Streamable HTTP error: )?Error POSTing to endpoint( \(HTTP \d+\))?:\s*/, '').trim())
    .find((m) => m !== '');
  const code = chain.map((e) => (e as { code?: unknown })?.code).find((c): c is string => typeof c === 'string');
  const parts = [status !== undefined && !message?.includes(`HTTP ${status}`) ? `HTTP ${status}` : undefined, message, code && !message?.includes(code) ? `(${code})` : undefined];
  return parts.filter(Boolean).join(' ').replace(/^(HTTP \d+) /, '$1: ') || 'unknown error';
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
