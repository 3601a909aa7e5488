import { createCompatServer, isWebSocketUpgrade, MemoryJournal, type CompatServer, type CompatServerOptions } from '@eve-flue/compat-server';
import { listen, type Listening } from './listen.ts';
import { ScriptedRuntime } from './scripted-runtime.ts';

export interface RunningBridge extends Listening {
  compat: CompatServer;
  runtime: CompatServerOptions['runtime'];
}

/** The compat server with the scripted test agent, listening on a free port. */
export async function startCompatBridge(options: Partial<CompatServerOptions> = {}): Promise<RunningBridge> {
  const runtime = options.runtime ?? new ScriptedRuntime();
  const compat = await createCompatServer({ journal: new MemoryJournal(), mode: 'development', ...options, runtime });
  const listening = await listen(compat.app);
  Object.assign(listening.server, { shouldUpgradeCallback: isWebSocketUpgrade });
  listening.server.on('upgrade', compat.handleUpgrade);
  return {
    ...listening,
    compat,
    runtime,
    async close() {
      await compat.closeWebSockets();
      await listening.close();
      await compat.close();
    },
  };
}
