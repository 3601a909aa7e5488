import type { JournalLine } from '../journal/journal.ts';

/** Each line's frame, encoded once however many readers send it; dropped with the line. */
const frames = new WeakMap<JournalLine, Buffer>();

/**
 * A journal line as the unmasked text frame a server sends (RFC 6455 §5.2): the line without its
 * newline. Encoded once per line and written to every reader's socket as is, where `ws.send`
 * would frame it again for each reader.
 */
export function textFrameOf(line: JournalLine): Buffer {
  let frame = frames.get(line);
  if (!frame) {
    frame = encodeTextFrame(line.line.endsWith('\n') ? line.line.slice(0, -1) : line.line);
    frames.set(line, frame);
  }
  return frame;
}

export function encodeTextFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81; // FIN, text
  if (header === 2) frame[1] = length;
  else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(text, header, 'utf8');
  return frame;
}
