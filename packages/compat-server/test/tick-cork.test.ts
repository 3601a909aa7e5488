import { Writable } from 'node:stream';
import { expect, test } from '@jest/globals';
import { TickCork } from '../src/stream/tick-cork.ts';

function recordingSocket() {
  const writes: string[][] = [];
  const socket = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push([chunk.toString()]);
      callback();
    },
    writev(chunks, callback) {
      writes.push(chunks.map((c) => String(c.chunk)));
      callback();
    },
  });
  return { socket, writes };
}

test('everything written in one tick leaves in one writev, in order, on the next tick', async () => {
  const { socket, writes } = recordingSocket();
  const cork = new TickCork(socket);
  cork.hold();
  socket.write('a');
  cork.hold();
  socket.write('b');
  socket.write('c');
  expect(writes).toEqual([]);
  await new Promise((resolve) => process.nextTick(resolve));
  expect(writes).toEqual([['a', 'b', 'c']]);
  expect(socket.writableCorked).toBe(0);
  cork.hold();
  socket.write('d');
  await new Promise((resolve) => setImmediate(resolve));
  expect(writes).toEqual([['a', 'b', 'c'], ['d']]);
});

test('ending a held socket loses none of its writes', async () => {
  const { socket, writes } = recordingSocket();
  const cork = new TickCork(socket);
  cork.hold();
  socket.write('a');
  socket.end('b');
  await new Promise((resolve) => socket.on('finish', resolve));
  expect(writes.flat()).toEqual(['a', 'b']);
});
