import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@jest/globals';
import { WebSocket, WebSocketServer } from 'ws';
import type { JournalLine } from '../src/journal/journal.ts';
import { ndjsonBytes, textFrames } from '../src/stream/page-bytes.ts';

const pageOf = (texts: readonly string[]): JournalLine[] => texts.map((text, index) => ({ index, type: 'message.appended', line: `${text}\n` }));

test('a page written raw to the socket reaches a ws client as the exact lines, at every length encoding', async () => {
  const texts = ['', 'é'.repeat(10), 'x'.repeat(125), 'y'.repeat(126), 'z'.repeat(65_535), '€'.repeat(30_000), 'w'.repeat(70_000)];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer();
  server.on('upgrade', (request, socket, head) => wss.handleUpgrade(request, socket, head, () => socket.write(textFrames(pageOf(texts), texts.length))));
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

test('a page is built once for every reader in a tick, for the lines asked, and not kept past it', async () => {
  const page = pageOf(['{"a":1}', '{"b":"é"}', '{"c":3}']);
  expect(ndjsonBytes(page, 2).toString()).toBe('{"a":1}\n{"b":"é"}\n');
  expect(ndjsonBytes(page, 2)).toBe(ndjsonBytes(page, 2));
  expect(textFrames(page, 3)).toBe(textFrames(page, 3));
  expect(ndjsonBytes(page, 3).toString()).toBe('{"a":1}\n{"b":"é"}\n{"c":3}\n');
  const thisTick = textFrames(page, 1);
  await new Promise(setImmediate);
  expect(textFrames(page, 1)).not.toBe(thisTick);
  expect(textFrames(page, 1)).toEqual(thisTick);
});
