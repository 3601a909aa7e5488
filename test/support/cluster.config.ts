/**
 * One bridge instance of a test cluster: the demo agent and scripted model, the demo MCP server
 * the test runs (MCP_URL), sessions and sign-ins in Redis (REDIS_URL, REDIS_PREFIX). Flue's
 * conversations live in that Redis too, unless FLUE_STORE=local keeps them in each instance's
 * own SQLite file (the store before conversations were shared).
 */
import { join } from 'node:path';
import { sqlite } from '@flue/runtime/node';
import { bearerTokens, defineBridgeConfig, defineFlueConnection } from '@eve-flue/bridge';
import { createScriptedModel } from '@eve-flue/flue-adapter';
import { Demo } from '../../apps/demo/src/agent.ts';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const model = createScriptedModel();
export default defineBridgeConfig({
  agent: Demo,
  providers: [model.provider],
  modelId: model.model,
  store: { redis: required('REDIS_URL'), prefix: required('REDIS_PREFIX') },
  // ROUTE_TOKEN turns route auth on, with one caller: `ops-test`.
  ...(process.env.ROUTE_TOKEN ? { auth: bearerTokens({ [process.env.ROUTE_TOKEN]: 'ops-test' }) } : {}),
  ...(process.env.FLUE_STORE === 'local' ? { flueDb: sqlite(join(required('DATA_DIR'), 'flue.db')) } : {}),
  connections: [defineFlueConnection({ name: 'demo', url: required('MCP_URL'), displayName: 'Demo', auth: { type: 'oauth2', scopes: ['mcp:tools'] } })],
  webPage: false,
  // MCP=1 serves Eve's MCP channel too.
  ...(process.env.MCP ? { mcp: {} } : {}),
  // STREAM_LEASE_MS makes stream responses short, so readers reconnect (through the balancer) mid-turn.
  ...(process.env.STREAM_LEASE_MS ? { streamLeaseMs: Number(process.env.STREAM_LEASE_MS) } : {}),
});
