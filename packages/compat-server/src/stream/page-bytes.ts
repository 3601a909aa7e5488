import { isTerminal } from '@eve-flue/eve-protocol';
import type { JournalLine } from '../journal/journal.ts';

/**
 * A page of journal lines as a stream sends it: the lines up to and including the first
 * terminal event (after which a stream ends), and those lines as each transport writes them.
 * Built once for every reader that sends the same page in the same tick (the readers of a
 * session all read the page an append woke them for), then dropped: nothing outlives the tick.
 */
export interface SentPage {
  /** The lines to send: the whole page, or up to its first terminal event. */
  count: number;
  /** The last of them is terminal: the stream ends after it. */
  ends: boolean;
  lines: readonly JournalLine[];
  ndjson?: Buffer;
  frames?: Buffer;
}

const thisTick = new Map<JournalLine, SentPage>();
const forget = () => thisTick.clear();

export function sentPage(page: readonly JournalLine[]): SentPage {
  const first = page[0]!;
  let sent = thisTick.get(first);
  if (sent?.lines.length !== page.length) {
    if (thisTick.size === 0) setImmediate(forget);
    const terminal = page.findIndex((line) => isTerminal(line.type));
    sent = { count: terminal === -1 ? page.length : terminal + 1, ends: terminal !== -1, lines: page };
    thisTick.set(first, sent);
  }
  return sent;
}

/** The page's lines to send, joined: one NDJSON chunk. */
export function ndjsonBytes(sent: SentPage): Buffer {
  const { lines: page, count } = sent;
  if (!sent.ndjson) {
    let text = '';
    for (let i = 0; i < count; i++) text += page[i]!.line;
    sent.ndjson = Buffer.from(text);
  }
  return sent.ndjson;
}

/**
 * The page's lines to send as consecutive unmasked text frames (RFC 6455 §5.2), each line
 * without its newline: what `ws.send` would write for each, framed once for every reader.
 */
export function textFrames(sent: SentPage): Buffer {
  const { lines: page, count } = sent;
  if (!sent.frames) {
    let size = 0;
    const lengths = new Array<number>(count);
    for (let i = 0; i < count; i++) {
      const line = page[i]!.line;
      const length = Buffer.byteLength(line) - (line.endsWith('\n') ? 1 : 0);
      lengths[i] = length;
      size += frameHeaderBytes(length) + length;
    }
    const frames = Buffer.allocUnsafe(size);
    let at = 0;
    for (let i = 0; i < count; i++) {
      at = writeFrameHeader(frames, at, lengths[i]!);
      at += frames.write(page[i]!.line, at, lengths[i]!, 'utf8');
    }
    sent.frames = frames;
  }
  return sent.frames;
}

const frameHeaderBytes = (length: number) => (length < 126 ? 2 : length < 65_536 ? 4 : 10);

function writeFrameHeader(frame: Buffer, at: number, length: number): number {
  frame[at] = 0x81; // FIN, text
  if (length < 126) {
    frame[at + 1] = length;
    return at + 2;
  }
  if (length < 65_536) {
    frame[at + 1] = 126;
    frame.writeUInt16BE(length, at + 2);
    return at + 4;
  }
  frame[at + 1] = 127;
  frame.writeBigUInt64BE(BigInt(length), at + 2);
  return at + 10;
}
