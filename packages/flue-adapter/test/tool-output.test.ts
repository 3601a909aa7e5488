import { describe, expect, test } from '@jest/globals';
import { connectionToolOutput, readRpcMessages, type McpCallResult } from '../src/tool-output.ts';

describe('connectionToolOutput', () => {
  test('structured content wins, once', () => {
    expect(connectionToolOutput({ structuredContent: { sum: 3 }, content: [{ type: 'text', text: '{"sum":3}' }] })).toEqual({ sum: 3 });
  });

  test('text stays text; other blocks come whole, with their data', () => {
    expect(connectionToolOutput({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\n\nb');
    const blocks: NonNullable<McpCallResult['content']> = [
      { type: 'text', text: 'here' },
      { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'resource', resource: { uri: 'file:///x', blob: 'AAEC' } },
      { type: 'resource_link', uri: 'file:///y', name: 'y' },
    ];
    expect(connectionToolOutput({ content: blocks })).toEqual(blocks);
  });

  test('beyond the cap: a marker with the byte count', () => {
    const big = { content: [{ type: 'image', mimeType: 'image/png', data: 'A'.repeat(2000) }] };
    expect(connectionToolOutput(big, 1000)).toEqual({ truncated: true, bytes: Buffer.byteLength(JSON.stringify(big.content)), limitBytes: 1000 });
  });
});

describe('readRpcMessages', () => {
  const body = (text: string) => new Response(text).body!;
  const read = async (text: string, eventStream: boolean) => {
    const seen: unknown[] = [];
    await readRpcMessages(body(text), eventStream, (message) => seen.push(message));
    return seen;
  };
  test('reads every message of an event stream or a JSON body', async () => {
    const stream = ': keep-alive\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n';
    expect(await read(stream, true)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } },
      { jsonrpc: '2.0', id: 7, result: { content: [] } },
    ]);
    expect(await read('{"jsonrpc":"2.0","id":7,"result":{"isError":true}}', false)).toEqual([{ jsonrpc: '2.0', id: 7, result: { isError: true } }]);
  });
});
