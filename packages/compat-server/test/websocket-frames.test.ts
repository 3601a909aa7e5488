import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@jest/globals';
import { WebSocket, WebSocketServer } from 'ws';
import { encodeTextFrame, textFrameOf } from '../src/stream/websocket-frames.ts';

test('frames written raw to the socket reach a ws client as the exact texts, at every length encoding', async () => {
  const texts = ['', 'é'.repeat(10), 'x'.repeat(125), 'y'.repeat(126), 'z'.repeat(65_535), '€'.repeat(30_000)];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer();
  server.on('upgrade', (request, socket, head) =>
    wss.handleUpgrade(request, socket, head, () => {
      for (const text of texts) socket.write(encodeTextFrame(text));
    }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const received: string[] = [];
  await new Promise<void>((resolve, reject) => {
    client.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      received.push(String(data));
      if (received.length === texts.length) resolve();
    });
    client.on('error', reject);
  });
  expect(received).toEqual(texts);
  client.terminate();
  wss.close();
  server.close();
});

test('a line is framed once, without its newline, for every reader', () => {
  const line = { index: 0, type: 'message.appended', line: '{"a":1}\n' };
  expect(textFrameOf(line)).toBe(textFrameOf(line));
  expect(textFrameOf(line).subarray(2).toString()).toBe('{"a":1}');
});
