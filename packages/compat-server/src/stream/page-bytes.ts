import type { JournalLine } from '../journal/journal.ts';

/**
 * A page of journal lines as each transport sends it, built once for every reader that sends
 * the same page in the same tick (the readers of a session all read the page an append woke
 * them for), then dropped: nothing is cached past the tick.
 */
interface Built {
  count: number;
  ndjson?: Buffer;
  frames?: Buffer;
}

const thisTick = new Map<JournalLine, Built>();
const forget = () => thisTick.clear();

function builtFor(page: readonly JournalLine[], count: number): Built {
  const first = page[0]!;
  let built = thisTick.get(first);
  if (built?.count !== count) {
    if (thisTick.size === 0) setImmediate(forget);
    built = { count };
    thisTick.set(first, built);
  }
  return built;
}

/** The first `count` lines of `page`, joined: one NDJSON chunk. */
export function ndjsonBytes(page: readonly JournalLine[], count: number): Buffer {
  const built = builtFor(page, count);
  if (!built.ndjson) {
    let text = '';
    for (let i = 0; i < count; i++) text += page[i]!.line;
    built.ndjson = Buffer.from(text);
  }
  return built.ndjson;
}

/**
 * The first `count` lines of `page` as consecutive unmasked text frames (RFC 6455 §5.2), each
 * line without its newline: what `ws.send` would write for each, framed once for every reader.
 */
export function textFrames(page: readonly JournalLine[], count: number): Buffer {
  const built = builtFor(page, count);
  if (!built.frames) {
    let size = 0;
    const lengths = new Array<number>(count);
    for (let i = 0; i < count; i++) {
      const length = Buffer.byteLength(page[i]!.line) - 1;
      lengths[i] = length;
      size += frameHeaderBytes(length) + length;
    }
    const frames = Buffer.allocUnsafe(size);
    let at = 0;
    for (let i = 0; i < count; i++) {
      at = writeFrameHeader(frames, at, lengths[i]!);
      at += frames.write(page[i]!.line, at, lengths[i]!, 'utf8');
    }
    built.frames = frames;
  }
  return built.frames;
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
