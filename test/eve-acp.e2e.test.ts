import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { ClientSideConnection, ndJsonStream, PROTOCOL_VERSION, type Client, type SessionNotification } from '@agentclientprotocol/sdk';
import { startCliBridge, type CliBridge } from './support/cli-bridge.ts';
import { EVE_BIN, eveEnvironment } from './support/eve-parent.ts';

/**
 * Eve's own ACP server, `eve acp --url <bridge>`, driven over stdio by the ACP SDK's client (as an
 * editor drives it), against the demo bridge in its own process.
 */
let bridge: CliBridge;
let acp: ChildProcess;
let cwd: string;
let connection: ClientSideConnection;
const updates: SessionNotification[] = [];
const updateWaiters: (() => void)[] = [];
/** Resolves at the next session update. */
const nextUpdate = () => new Promise<void>((resolve) => updateWaiters.push(resolve));
let stderr = '';

beforeAll(async () => {
  bridge = await startCliBridge();
  cwd = await mkdtemp(join(tmpdir(), 'eve-acp-'));
  acp = spawn(process.execPath, [EVE_BIN, 'acp', '--url', bridge.url], { cwd, env: eveEnvironment(), stdio: ['pipe', 'pipe', 'pipe'] });
  acp.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client: Client = {
    sessionUpdate: (notification) => {
      updates.push(notification);
      for (const wake of updateWaiters.splice(0)) wake();
    },
    requestPermission: async ({ options }) => ({ outcome: { outcome: 'selected', optionId: options[0]!.optionId } }),
  };
  connection = new ClientSideConnection(
    () => client,
    ndJsonStream(Writable.toWeb(acp.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(acp.stdout!) as ReadableStream<Uint8Array>),
  );
}, 60_000);

afterAll(async () => {
  if (acp && acp.exitCode === null && acp.signalCode === null) {
    const exited = once(acp, 'exit');
    acp.kill('SIGTERM');
    await exited;
  }
  await bridge?.stop();
  await rm(cwd, { recursive: true, force: true });
});

/** The agent's text for a session since `from`, joined. */
const agentText = (sessionId: string, from = 0): string =>
  updates
    .slice(from)
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === 'agent_message_chunk')
    .map((n) => (n.update as { content: { type: string; text?: string } }).content.text ?? '')
    .join('');

let sessionId: string;

test('an ACP client initializes, opens a session and gets the Flue agent’s answer', async () => {
  const init = await connection.initialize({ protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
  ({ sessionId } = await connection.newSession({ cwd, mcpServers: [] }));
  const from = updates.length;
  const answer = await connection.prompt({ sessionId, prompt: [{ type: 'text', text: 'hello over ACP' }] });
  expect({ answer, stderr: answer.stopReason === 'end_turn' ? '' : stderr }).toEqual({ answer: expect.objectContaining({ stopReason: 'end_turn' }), stderr: '' });
  expect(agentText(sessionId, from)).toBe('Echo: hello over ACP');
}, 60_000);

test('a connection tool call is reported, with its result', async () => {
  const from = updates.length;
  const answer = await connection.prompt({ sessionId, prompt: [{ type: 'text', text: '/tool connection__demo__echo {"text":"over acp"}' }] });
  expect(answer.stopReason).toBe('end_turn');
  const kinds = updates.slice(from).map((n) => n.update.sessionUpdate);
  expect(kinds).toContain('tool_call');
  expect(agentText(sessionId, from)).toBe('Tool connection__demo__echo returned: over acp');
}, 60_000);

test('cancel stops the running turn', async () => {
  const from = updates.length;
  const prompt = connection.prompt({ sessionId, prompt: [{ type: 'text', text: '/sleep 60000' }] });
  while (agentText(sessionId, from).length === 0) await nextUpdate();
  await connection.cancel({ sessionId });
  expect((await prompt).stopReason).toBe('cancelled');
}, 60_000);
