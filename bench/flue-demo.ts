/** Flue alone, as the benchmarks' baselines run it: the demo agent on the scripted model, on a `flue.db` in a temp dir. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useModel } from '@flue/runtime';
import { sqlite, start } from '@flue/runtime/node';
import { createScriptedModel, flueStore, SCRIPTED_MODEL } from '@eve-flue/flue-adapter';

export function Demo(): string {
  useModel(SCRIPTED_MODEL);
  return 'You are the Eve/Flue bridge demo agent.';
}
Demo.agentName = 'demo';

/**
 * Starts Flue with the store the bridge hands it (`synchronous=NORMAL`), or with `full` Flue's
 * own `sqlite()` (SQLite's default `synchronous=FULL`). `stop()` also deletes the temp dir.
 */
export async function startFlueAlone(full = false): Promise<{ stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'eve-flue-bench-flue-'));
  const model = createScriptedModel();
  const flue = await start({ agents: [Demo], providers: [model.provider], db: (full ? sqlite : flueStore)(join(dataDir, 'flue.db')) });
  return {
    async stop() {
      await flue.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
