/**
 * What `action.result` carries for a connection tool: the result the MCP server sent, not the
 * text Flue makes of it for the model. Structured content when there is some; otherwise the
 * text, or every content block (text, image, audio, resource, resource link) with its data when
 * there is more than text. A result larger than `MAX_RESULT_BYTES` once serialized is replaced
 * by a marker that says so and how large it was.
 */
export const MAX_RESULT_BYTES = 1024 * 1024;

export interface McpCallResult {
  content?: { type: string; text?: string }[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface TruncatedOutput {
  truncated: true;
  /** Size of the serialized output the server sent, in bytes. */
  bytes: number;
  limitBytes: number;
}

export function connectionToolOutput(result: McpCallResult, limitBytes = MAX_RESULT_BYTES): unknown {
  const blocks = result.content ?? [];
  const output =
    result.structuredContent !== undefined
      ? result.structuredContent
      : blocks.every((block) => block.type === 'text')
        ? blocks.map((block) => block.text ?? '').join('\n\n')
        : blocks;
  const bytes = Buffer.byteLength(JSON.stringify(output) ?? '');
  if (bytes <= limitBytes) return output;
  return { truncated: true, bytes, limitBytes } satisfies TruncatedOutput;
}

/** The JSON-RPC result for request `id` in an MCP answer: a JSON body or an event stream. */
export async function rpcResultIn(body: ReadableStream<Uint8Array>, contentType: string, id: string | number): Promise<McpCallResult | undefined> {
  const text = await new Response(body).text();
  const messages = contentType.includes('text/event-stream') ? eventData(text) : [text];
  for (const data of messages) {
    try {
      const parsed = JSON.parse(data) as unknown;
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
        const rpc = message as { id?: unknown; result?: McpCallResult };
        if (rpc.id === id && rpc.result) return rpc.result;
      }
    } catch {
      // Not JSON (a comment, a keep-alive): not the result.
    }
  }
  return undefined;
}

function eventData(stream: string): string[] {
  return stream.split(/\r?\n\r?\n/).map((event) =>
    event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n'),
  );
}
