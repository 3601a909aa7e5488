/**
 * The readers of bench/fanout.ts, in a process of their own so that parsing frames and lines
 * costs the writer nothing: opens the readers, says `open`, and says `done` once every reader
 * has seen every event. Run by fanout.ts: node bench/fanout-readers.ts <url> <ndjson|websocket> <readers> <events>
 */
import { countFrames, countLines, openReaders, openWebSocketReaders } from './lib.ts';

const [url, transport, readers, events] = process.argv.slice(2) as [string, 'ndjson' | 'websocket', string, string];
const count = Number(readers);
const expected = Number(events);
const done =
  transport === 'ndjson'
    ? Promise.all((await openReaders(url, count)).map((r) => countLines(r, expected)))
    : Promise.all((await openWebSocketReaders(url, count)).map((s) => countFrames(s, expected)));
process.send!('open');
await done;
process.send!('done', () => process.exit(0));
