import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { defineTool } from '@flue/runtime';
import * as v from 'valibot';
import { silentLogger } from '@eve-flue/compat-server';
import { bearerTokens, defineBridgeConfig, startBridge } from '@eve-flue/bridge';
import { Demo } from '../../demo/src/agent.ts';
import { checkConnections } from '../src/check.ts';

const run = () => 'done';
const lookup = defineTool({ name: 'lookup', description: 'Looks something up.', run });

describe('bridge configuration', () => {
  test.each([
    [{ agent: Demo, prot: 3000 }, '`prot` is not a bridge setting'],
    [{ agent: 'Demo' }, '`agent` must be a Flue agent function'],
    [{ agent: Demo, store: 'postgres' }, '`store` must be "sqlite", "memory" or { redis'],
    [{ agent: Demo, store: { redis: 'not a url' } }, '`store` must be'],
    [{ agent: Demo, port: 70_000 }, '`port` must be a port number'],
    [{ agent: Demo, publicUrl: 'bridge.example.com' }, '`publicUrl` must be an absolute URL'],
    [{ agent: Demo, mcp: { agent: false } }, '`mcp` publishes nothing with agent and tools both off'],
    [{ agent: Demo, mcp: { tool: true } }, '`mcp.tool` is not an MCP channel setting'],
    [{ agent: Demo, mcp: { route: 'mcp' } }, '`mcp.route` must be a path'],
    [{ agent: Demo, mcp: { oauth: { issuer: 'auth.example.com' } } }, '`mcp.oauth.issuer` must be the authorization server URL'],
    [{ agent: Demo, mcp: { oauth: { issuer: 'https://auth.example.com', scopes: ['a b'] } } }, '`mcp.oauth.scopes` must be a list of scope names'],
    [{ agent: Demo, auth: 'secret' }, '`auth` must be a route auth strategy or an array of them'],
    [{ agent: Demo, sessions: { owner: 'creator' } }, '`sessions` must be { owner: "principal" }'],
    [{ agent: Demo, limits: { maxTextBytes: -1 } }, '`limits.maxTextBytes` must be a positive integer'],
    [{ agent: Demo, limits: { maxFiles: 3 } }, '`limits.maxFiles` is not a limit'],
    [{ agent: Demo, idleSessionMs: -1 }, '`idleSessionMs` must be a number of milliseconds'],
    [{ agent: Demo, maxResidentSessions: 0 }, '`maxResidentSessions` must be a positive integer'],
    [{ agent: Demo, connections: { name: 'notes' } }, '`connections` must be an array of connection definitions or a function'],
    [{ agent: Demo, tools: lookup }, '`tools` must be a list of Flue tool definitions (defineTool from @flue/runtime)'],
    [{ agent: Demo, tools: [{ name: 'lookup', description: 'Looks.' }] }, '`tools[0]` (lookup) is not a Flue tool definition: defineTool() run must be a function.'],
    [{ agent: Demo, tools: [{ name: 'lookup', description: 'Looks.', run, input: v.string() }] }, '`tools[0]` (lookup) is not a Flue tool definition: defineTool() input must be a top-level object schema.'],
    [{ agent: Demo, tools: [{ name: 'lookup', description: 'Looks.', run, approval: 'always' }] }, '`tools[0]` (lookup) is not a Flue tool definition: defineTool() received unknown field "approval"'],
    [{ agent: Demo, tools: [lookup, { ...lookup }] }, '`tools[1]` (lookup): another tool is named lookup; tool names must be unique'],
    [{ agent: Demo, tools: [{ ...lookup, name: 'connection__crm__find' }] }, '`tools[0]` (connection__crm__find): the names connection__* and mcp__* belong to connection tools'],
    [{ agent: Demo, tools: [{ ...lookup, name: 'mcp__crm__find' }] }, 'the names connection__* and mcp__* belong to connection tools'],
    [{ agent: Demo, tools: [{ ...lookup, timeoutMs: 0 }] }, '`tools[0]` (lookup): timeoutMs must be a positive number of milliseconds'],
  ])('refuses %j', (config, message) => {
    expect(() => defineBridgeConfig(config as never)).toThrow(message);
  });

  test('the agent\'s own tools are checked by Flue\'s defineTool and frozen, a plain object too', () => {
    const config = defineBridgeConfig({ agent: Demo, tools: [{ name: 'inline', description: 'Written inline.', input: undefined, output: undefined, run }] });
    expect(config.tools!.map((tool) => tool.name)).toEqual(['inline']);
    expect(Object.isFrozen(config.tools)).toBe(true);
    expect(Object.isFrozen(config.tools![0])).toBe(true);
  });

  test('production refuses to start without route auth, and without a token key, before it listens', async () => {
    await expect(startBridge({ agent: Demo, mode: 'production', port: 0, store: 'memory' }, { logger: silentLogger })).rejects.toThrow(
      /production mode without route auth/,
    );
    await expect(
      startBridge({ agent: Demo, mode: 'production', port: 0, store: 'memory', auth: bearerTokens({ 'a-long-enough-token-1': 'ops' }) }, { logger: silentLogger }),
    ).rejects.toThrow(/production mode needs a token key/);
  });

  test('a malformed eviction setting in the environment stops the start, naming it', async () => {
    await expect(startBridge({ agent: Demo, port: 0, store: 'memory' }, { logger: silentLogger, env: { MAX_RESIDENT_SESSIONS: 'lots' } })).rejects.toThrow(
      '[eve-flue] MAX_RESIDENT_SESSIONS: "lots" is not a positive integer',
    );
  });

  test('connections resolved per caller: a function starts (it crashed at start before), and check says what it cannot check', async () => {
    const config = defineBridgeConfig({ agent: Demo, store: 'memory', port: 0, connections: () => [] });
    expect(await checkConnections(config)).toEqual({ lines: ['connections are resolved per caller (a function): each set is listed when a session starts'], ready: true });
    const bridge = await startBridge(config, { logger: silentLogger });
    try {
      expect(bridge.connections.status()).toEqual([]);
    } finally {
      await bridge.close();
    }
  });

  test('the CLI explains itself', () => {
    const cli = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
    const help = execFileSync(process.execPath, [cli, '--help'], { encoding: 'utf8' });
    expect(help).toContain('eve-flue-bridge start [--config <file>]');
    expect(help).toContain('DATA_DIR');
  });
});
