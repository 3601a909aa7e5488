/** The events of a session's NDJSON stream (following it), until `done` accepts one (inclusive). */
export async function streamUntil(
  baseUrl: string,
  sessionId: string,
  done: (event: { type: string; data: Record<string, unknown> }) => boolean,
  headers: Record<string, string> = {},
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const response = await fetch(`${baseUrl}/eve/v1/session/${encodeURIComponent(sessionId)}/stream`, { headers });
  if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
  const seen: { type: string; data: Record<string, unknown> }[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (!line || !line.startsWith('{')) continue;
      const event = JSON.parse(line) as { type: string; data: Record<string, unknown> };
      seen.push(event);
      // Leaving the loop cancels the response body.
      if (done(event)) return seen;
    }
  }
  throw new Error(`the stream ended before the awaited event; saw ${seen.map((e) => e.type).join(', ')}`);
}
