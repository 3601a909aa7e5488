import { describe, expect, test } from '@jest/globals';
import { connectionToolOutput, readRpcMessages, type McpCallResult } from '../src/tool-output.ts';

describe('connectionToolOutput', () => {
  test('structured content wins, once', () => {
    expect(connectionToolOutput({ structuredContent: { sum: 3 }, content: [{ type: 'text', text: '{"sum":3}' }] }, true)).toEqual({ sum: 3 });
  });

  test('JSON text is parsed when the tool declares no output schema (Eve’s rule)', () => {
    expect(connectionToolOutput({ content: [{ type: 'text', text: ' {"sum": 3} ' }] }, false)).toEqual({ sum: 3 });
    expect(connectionToolOutput({ content: [{ type: 'text', text: '[1,' }, { type: 'text', text: '2]' }] }, false)).toEqual([1, 2]);
    expect(connectionToolOutput({ content: [{ type: 'text', text: '{"sum": 3}' }] }, true)).toBe('{"sum": 3}');
    expect(connectionToolOutput({ content: [{ type: 'text', text: '{not json' }] }, false)).toBe('{not json');
    expect(connectionToolOutput({ content: [{ type: 'text', text: '42' }] }, false)).toBe('42');
  });

  test('text stays text; other blocks come whole, with their data', () => {
    expect(connectionToolOutput({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, false)).toBe('a\nb');
    const blocks: NonNullable<McpCallResult['content']> = [
      { type: 'text', text: 'here' },
      { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'resource', resource: { uri: 'file:///x', blob: 'AAEC' } },
      { type: 'resource_link', uri: 'file:///y', name: 'y' },
    ];
    expect(connectionToolOutput({ content: blocks, structuredContent: { ignored: true } }, false)).toEqual(blocks);
  });

  test('beyond the cap: a marker with the byte count', () => {
    const big = { content: [{ type: 'image', mimeType: 'image/png', data: 'A'.repeat(2000) }] };
    expect(connectionToolOutput(big, false, 1000)).toEqual({ truncated: true, bytes: Buffer.byteLength(JSON.stringify(big.content)), limitBytes: 1000 });
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
