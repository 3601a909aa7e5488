import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VARIABLES } from './settings.ts';

const CONFIG = `// What \`eve-flue-bridge start\` serves. Check it with \`eve-flue-bridge check\`.
import { useModel } from '@flue/runtime';
import { bearerTokens, defineBridgeConfig, defineFlueConnection } from '@eve-flue/bridge';
import { scriptedModel } from '@eve-flue/bridge/testing';

// An offline model that echoes what it is sent and calls a tool on "/tool <name> <json>".
// For a real one, call e.g. useModel('anthropic/claude-sonnet-4-5') (Flue reads ANTHROPIC_API_KEY)
// and drop \`providers\` below.
const model = scriptedModel();

/** The Flue agent: it returns its instructions. The bridge mounts the connections on it. */
export function Assistant(): string {
  useModel(model.model);
  return 'You are a helpful assistant. Use the connection tools when asked.';
}
Assistant.agentName = 'assistant';

export default defineBridgeConfig({
  agent: Assistant,
  providers: [model.provider],
  // MCP servers the agent uses; Eve clients see their tools as connection__<name>__<tool>.
  connections: [
    // defineFlueConnection({ name: 'orders', url: 'https://orders.example.com/mcp' }),
  ],
  // Who may call the bridge; production (NODE_ENV=production) refuses to start without it.
  // Eve's strategies work too, alone or in a list tried in order, e.g.
  // [oidc({ issuer: 'https://login.example.com', audiences: ['my-agent'] }), localDev()].
  auth: process.env.BRIDGE_TOKEN ? bearerTokens({ [process.env.BRIDGE_TOKEN]: 'my-app' }) : undefined,
  // Keep each session to the caller that created it (others get 404):
  // sessions: { owner: 'principal' },
  // Operators' settings (port, public URL, data folder, CORS origins...) come from the
  // environment: see .env.example. A value set here wins over the environment.
});
`;

/** `.env.example`: every variable of the settings table, commented out, then the starter config's own. */
const ENV = [
  '# Settings eve-flue-bridge reads from the environment (and from ./.env when present).',
  '# A value set in bridge.config.ts wins over these.',
  '',
  ...VARIABLES.flatMap((variable) => [`# ${variable.help}`, `# ${variable.name}=${variable.example ?? ''}`]),
  '# The bearer token bridge.config.ts accepts (a long random string).',
  '# BRIDGE_TOKEN=',
  '',
].join('\n');

export const STARTER_FILES = { 'bridge.config.ts': CONFIG, '.env.example': ENV } as const;

/** Writes the starter files into `dir`; refuses (writing nothing) when any of them exists. */
export function writeStarterFiles(dir: string): string[] {
  const names = Object.keys(STARTER_FILES) as (keyof typeof STARTER_FILES)[];
  const existing = names.filter((name) => existsSync(join(dir, name)));
  if (existing.length > 0) throw new Error(`[eve-flue] ${existing.join(' and ')} already exist${existing.length === 1 ? 's' : ''}; init never overwrites a file`);
  for (const name of names) writeFileSync(join(dir, name), STARTER_FILES[name], { flag: 'wx' });
  return names;
}
