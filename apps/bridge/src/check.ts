import { silentLogger } from '@eve-flue/compat-server';
import type { ConnectionStatus } from '@eve-flue/connections';
import { bridgeFromSettings } from './bridge.ts';
import type { BridgeConfig } from './config.ts';
import { resolveSettings, type Env } from './settings.ts';

export interface CheckResult {
  /** One line per connection: its tools when ready, else its state and what it is missing. */
  lines: string[];
  ready: boolean;
}

/**
 * Connects every connection once, the way the bridge does at startup (with the same sign-in
 * setup), on a throwaway in-memory store so that nothing is written or shared.
 */
export async function checkConnections(config: Readonly<BridgeConfig>, { env }: { env?: Env } = {}): Promise<CheckResult> {
  const settings = resolveSettings(config, env);
  // Nothing to connect without a caller: each set is listed when its caller's session starts.
  if (typeof settings.connections === 'function') return { lines: ['connections are resolved per caller (a function): each set is listed when a session starts'], ready: true };
  const bridge = await bridgeFromSettings({ ...settings, store: { kind: 'memory' }, publicUrl: settings.publicUrl ?? 'http://localhost' }, silentLogger);
  try {
    const statuses = bridge.connections.status();
    if (statuses.length === 0) return { lines: ['no connections configured'], ready: true };
    return { lines: statuses.map(describe), ready: statuses.every((status) => status.state === 'ready') };
  } finally {
    await bridge.close();
  }
}

function describe(status: ConnectionStatus): string {
  if (status.state === 'ready') return `${status.name}: ready, tools ${status.tools.join(', ') || '(none)'}`;
  return `${status.name}: ${status.state.replace(/_/g, ' ')}: ${status.missing.join('; ')}`;
}
