/**
 * The readers of bench/fanout.ts, in a process of their own so that reading costs the writer
 * nothing, each doing the least its transport allows (NDJSON: count newlines; WebSocket: walk
 * the frame headers): opens the readers, says `open`, and says `done` once every reader has
 * seen every event. Run by fanout.ts: node bench/fanout-readers.ts <url> <ndjson|websocket> <readers> <events>
 */
import { countLines, countRawFrames, openRawWebSocketReaders, openReaders } from './lib.ts';

const [url, transport, readers, events] = process.argv.slice(2) as [string, 'ndjson' | 'websocket', string, string];
const count = Number(readers);
const expected = Number(events);
const done =
  transport === 'ndjson'
    ? Promise.all((await openReaders(url, count)).map((r) => countLines(r, expected)))
    : Promise.all((await openRawWebSocketReaders(url, count)).map((s) => countRawFrames(s, expected)));
process.send!('open');
await done;
process.send!('done', () => process.exit(0));
