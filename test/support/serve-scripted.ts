/**
 * A compat server with the scripted test agent and a SQLite journal in `DATA_DIR`, in its own
 * process so that tests can kill it the hard way. Prints `{"url": ...}` once it listens.
 */
import { createCompatServer, SqliteJournal } from '@eve-flue/compat-server';
import { join } from 'node:path';
import { listen } from './listen.ts';
import { ScriptedRuntime } from './scripted-runtime.ts';

const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error('DATA_DIR is required');
const compat = await createCompatServer({
  runtime: new ScriptedRuntime(),
  journal: new SqliteJournal(join(dataDir, 'journal.db')),
  mode: 'development',
});
const { url } = await listen(compat.app);
process.stdout.write(`${JSON.stringify({ url })}\n`);
