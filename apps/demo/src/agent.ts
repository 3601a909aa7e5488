import { useModel } from '@flue/runtime';
import { SCRIPTED_MODEL } from '@eve-flue/bridge/testing';

/** The embedded demo agent: a scripted model (no provider needed) plus the bridge's connections. */
export function Demo(): string {
  useModel(SCRIPTED_MODEL);
  return 'You are the Eve/Flue bridge demo agent. Use the connection tools when asked.';
}
Demo.agentName = 'demo';
