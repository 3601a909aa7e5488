/**
 * One bridge instance of a test cluster: the demo agent and scripted model, the demo MCP server
 * the test runs (MCP_URL), sessions and sign-ins in Redis (REDIS_URL, REDIS_PREFIX).
 */
import { defineBridgeConfig, defineFlueConnection } from '@eve-flue/bridge';
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
  connections: [defineFlueConnection({ name: 'demo', url: required('MCP_URL'), displayName: 'Demo', auth: { type: 'oauth2', scopes: ['mcp:tools'] } })],
  webPage: false,
});
