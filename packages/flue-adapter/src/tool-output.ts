/**
 * What `action.result` carries for a connection tool: the result the MCP server sent, not the
 * text Flue makes of it for the model, by Eve's rule (`toConnectionToolResult`): every content
 * block when there is more than text; else the structured content when there is some; else the
 * text (blocks joined by a line break), parsed as JSON when the tool declares no output schema
 * and the text is a JSON object or array. A result larger than `MAX_RESULT_BYTES` once
 * serialized is replaced by a marker that says so and how large it was.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { JsonObject, JsonValue } from '@eve-flue/eve-protocol';

export const MAX_RESULT_BYTES = 1024 * 1024;

/** A `tools/call` result as read off a JSON-RPC answer: JSON by construction. */
export interface McpCallResult {
  content?: (JsonObject & { type: string; text?: string })[];
  structuredContent?: JsonValue;
  isError?: boolean;
}

export type TruncatedOutput = {
  truncated: true;
  /** Size of the serialized output the server sent, in bytes. */
  bytes: number;
  limitBytes: number;
};

export function connectionToolOutput(result: McpCallResult, hasOutputSchema: boolean, limitBytes = MAX_RESULT_BYTES): JsonValue {
  const blocks = result.content ?? [];
  const text = blocks
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n');
  const output = blocks.some((block) => block.type !== 'text')
    ? blocks
    : result.structuredContent !== undefined
      ? result.structuredContent
      : hasOutputSchema
        ? text
        : parsedJsonText(text);
  const bytes = Buffer.byteLength(JSON.stringify(output) ?? '');
  if (bytes <= limitBytes) return output;
  return { truncated: true, bytes, limitBytes } satisfies TruncatedOutput;
}

/** Eve's `parseJsonText`: a JSON object or array, else the text as it is. */
function parsedJsonText(text: string): JsonValue {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.parse(trimmed) as JsonValue;
  } catch {
    return text;
  }
}

/** A JSON-RPC message as far as the bridge reads it. */
export interface RpcMessage {
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: McpCallResult;
}

/**
 * Reads every JSON-RPC message of an MCP answer, a JSON body or an event stream (as each event
 * arrives, so a standing stream is read as it goes), and hands each to `onMessage`.
 */
export async function readRpcMessages(body: ReadableStream<Uint8Array>, eventStream: boolean, onMessage: (message: RpcMessage) => void): Promise<void> {
  const emit = (data: string) => {
    try {
      const parsed = JSON.parse(data) as unknown;
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) if (typeof message === 'object' && message !== null) onMessage(message as RpcMessage);
    } catch {
      // Not JSON (a comment, a keep-alive): nothing to read.
    }
  };
  if (!eventStream) return emit(await new Response(body).text());
  for await (const event of body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) emit(event.data);
}
