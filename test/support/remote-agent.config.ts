/**
 * A bridge for the remote-agent tests: the demo agent on the scripted model, no connections,
 * durable in DATA_DIR, or with REDIS_URL and REDIS_PREFIX one instance of a cluster on that Redis.
 * ROUTE_TOKEN turns route auth on (one caller, `eve-parent`); then FORWARDER names the one caller
 * `trustedForwarders` trusts.
 */
import { bearerTokens, defineBridgeConfig } from '@eve-flue/bridge';
import { createScriptedModel } from '@eve-flue/flue-adapter';
import { Demo } from '../../apps/demo/src/agent.ts';

const model = createScriptedModel();
export default defineBridgeConfig({
  agent: Demo,
  providers: [model.provider],
  modelId: model.model,
  webPage: false,
  ...(process.env.REDIS_URL ? { store: { redis: process.env.REDIS_URL, prefix: process.env.REDIS_PREFIX ?? 'eve:' } } : {}),
  ...(process.env.ROUTE_TOKEN ? { auth: bearerTokens({ [process.env.ROUTE_TOKEN]: 'eve-parent' }) } : {}),
  ...(process.env.FORWARDER ? { trustedForwarders: (forwarder) => forwarder.id === process.env.FORWARDER } : {}),
});
