import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@jest/globals';
import { WebSocket, WebSocketServer } from 'ws';
import type { JournalLine } from '../src/journal/journal.ts';
import { ndjsonBytes, sentPage, textFrames } from '../src/stream/page-bytes.ts';

const pageOf = (texts: readonly string[]): JournalLine[] => texts.map((text, index) => ({ index, type: 'message.appended', line: `${text}\n` }));

test('a page written raw to the socket reaches a ws client as the exact lines, at every length encoding', async () => {
  const texts = ['', 'é'.repeat(10), 'x'.repeat(125), 'y'.repeat(126), 'z'.repeat(65_535), '€'.repeat(30_000), 'w'.repeat(70_000)];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer();
  server.on('upgrade', (request, socket, head) => wss.handleUpgrade(request, socket, head, () => socket.write(textFrames(sentPage(pageOf(texts))))));
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

test('a page is sent up to its first terminal event, built once for every reader in a tick, and not kept past it', async () => {
  const page = pageOf(['{"a":1}', '{"b":"é"}', '{"c":3}']);
  page[1]!.type = 'session.completed';
  const sent = sentPage(page);
  expect(sent).toMatchObject({ count: 2, ends: true });
  expect(ndjsonBytes(sent).toString()).toBe('{"a":1}\n{"b":"é"}\n');
  expect(sentPage(page)).toBe(sent);
  expect(ndjsonBytes(sentPage(page))).toBe(ndjsonBytes(sent));
  expect(textFrames(sentPage(page))).toBe(textFrames(sent));
  const whole = pageOf(['{"x":1}', '{"y":2}']);
  expect(sentPage(whole)).toMatchObject({ count: 2, ends: false });
  expect(sentPage(whole.slice(0, 1))).toMatchObject({ count: 1, ends: false });
  await new Promise(setImmediate);
  expect(sentPage(page)).not.toBe(sent);
  expect(textFrames(sentPage(page))).toEqual(textFrames(sent));
});
