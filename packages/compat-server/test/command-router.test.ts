/**
 * The clustered command router on its own: two routers over one journal, with an in-memory
 * stand-in for the Redis leases and pub/sub. A forwarded command crosses as JSON and is read
 * back by the contract's schema, as it is between real instances.
 */
import { afterEach, expect, test } from '@jest/globals';
import { ZodError } from 'zod';
import { encodeCommand, sessionCommand, type SessionBoundCommand } from '@eve-flue/session-contract';
import { MemoryJournal, silentLogger } from '@eve-flue/compat-server';
import { OwnerUnreachableError, type SessionCluster } from '../src/session/cluster.ts';
import { ClusteredSessions } from '../src/session/clustered-sessions.ts';
import { SessionManager } from '../src/session/manager.ts';
import { ScriptedRuntime } from '../../../test/support/scripted-runtime.ts';

/** Leases and inboxes shared by the stand-in clusters of one test. */
class Leases {
  readonly holders = new Map<string, string>();
  readonly inboxes = new Map<string, (command: SessionBoundCommand) => Promise<unknown>>();
  /** Replaces the owner's answer, to play an owner that misbehaves. */
  tamper: ((answer: unknown) => unknown) | undefined;
  /** Instances that stopped answering. */
  readonly silent = new Set<string>();
}

function memberOf(leases: Leases, instanceId: string): SessionCluster {
  return {
    instanceId,
    async claim(sessionId) {
      const holder = leases.holders.get(sessionId);
      if (holder === undefined) leases.holders.set(sessionId, instanceId);
      return { owner: leases.holders.get(sessionId)!, fresh: holder === undefined };
    },
    async release(sessionId) {
      if (leases.holders.get(sessionId) === instanceId) leases.holders.delete(sessionId);
    },
    holds: (sessionId) => leases.holders.get(sessionId) === instanceId,
    isHeld: async (sessionId) => leases.holders.has(sessionId),
    async forward(owner, command) {
      if (leases.silent.has(owner)) throw new OwnerUnreachableError('no answer');
      const wire = JSON.parse(JSON.stringify(encodeCommand(command))) as unknown;
      const received = sessionCommand.parse(wire);
      if (received.kind === 'create') throw new Error('a create is never forwarded');
      const answer = JSON.parse(JSON.stringify(await leases.inboxes.get(owner)!(received))) as unknown;
      return leases.tamper ? leases.tamper(answer) : answer;
    },
    serve(handler) {
      leases.inboxes.set(instanceId, handler);
    },
    async close() {},
  };
}

const opened: ClusteredSessions[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((sessions) => sessions.close()));
});

function cluster() {
  const leases = new Leases();
  const journal = new MemoryJournal();
  const runtimes = [new ScriptedRuntime(), new ScriptedRuntime()];
  const [a, b] = runtimes.map((runtime, i) => {
    const local = new SessionManager({ journal, runtime, logger: silentLogger, retentionMs: 60_000 });
    return new ClusteredSessions(local, memberOf(leases, `ins_${i}`), journal, silentLogger, 60_000);
  });
  opened.push(a!, b!);
  return { leases, journal, runtimes, a: a!, b: b! };
}

const message = (text: string) => ({ text, parts: [{ type: 'text' as const, text }], files: [] });

/** Resolves once the session's journal shows `turns` turns settled (waiting for the next message). */
async function settled(journal: MemoryJournal, sessionId: string, turns: number): Promise<void> {
  for (;;) {
    const appended = new Promise<void>((resolve) => {
      const listener = {
        appended() {
          journal.unsubscribe(sessionId, listener);
          resolve();
        },
      };
      journal.subscribe(sessionId, listener);
    });
    const lines = await journal.read(sessionId, 0, 1_000);
    if (lines.filter((line) => line.type === 'session.waiting').length >= turns) return;
    await appended;
  }
}

test('a message sent where the session is not owned runs on its owner, with the delivery id given where it arrived', async () => {
  const { a, b, runtimes, journal, leases } = cluster();
  const sessionId = await a.execute({ kind: 'create' });
  expect(leases.holders.get(sessionId)).toBe('ins_0');
  const deliveryId = await b.execute({ kind: 'send', sessionId, input: message('over the wire'), policy: 'queue', deliveryId: 'dlv_from_b' });
  expect(deliveryId).toBe('dlv_from_b');
  await settled(journal, sessionId, 1);
  expect(runtimes[0]!.seen).toEqual(['over the wire']);
  expect(runtimes[1]!.seen).toEqual([]);
});

test('an answer that does not fit the command result schema is refused, not passed on', async () => {
  const { a, b, leases } = cluster();
  const sessionId = await a.execute({ kind: 'create' });
  leases.tamper = () => 'maybe';
  await expect(b.execute({ kind: 'cancel', sessionId })).rejects.toBeInstanceOf(ZodError);
  leases.tamper = undefined;
  expect(await b.execute({ kind: 'cancel', sessionId })).toBe('accepted');
});

test('an owner that stopped answering and lost its lease is replaced: the command runs here', async () => {
  const { a, b, leases } = cluster();
  const sessionId = await a.execute({ kind: 'create' });
  leases.silent.add('ins_0');
  await expect(b.execute({ kind: 'clear', sessionId })).rejects.toMatchObject({ code: 'service_unavailable' });
  leases.holders.delete(sessionId);
  expect(await b.execute({ kind: 'compact', sessionId })).toBe('accepted');
  expect(leases.holders.get(sessionId)).toBe('ins_1');
});

test('a reset forwarded to the owner ends the session there and frees its lease', async () => {
  const { a, b, leases } = cluster();
  const sessionId = await a.execute({ kind: 'create' });
  expect(await b.execute({ kind: 'reset', sessionId })).toBe('reset');
  expect(leases.holders.has(sessionId)).toBe(false);
  expect(await b.execute({ kind: 'reset', sessionId })).toBe('no_active_session');
});

test("a forwarded message keeps its caller's whole principal: issuer, subject, attributes", async () => {
  const principal = { id: 'https://login.example.com/:alice', type: 'service', issuer: 'https://login.example.com/', subject: 'alice', attributes: { email: 'alice@example.com', groups: ['a', 'b'] } } as const;
  const wire = JSON.parse(JSON.stringify(encodeCommand({ kind: 'create', principal }))) as unknown;
  expect(sessionCommand.parse(wire)).toEqual({ kind: 'create', principal });
  expect(() => sessionCommand.parse({ kind: 'create', principal: { ...principal, type: 'root' } })).toThrow(ZodError);
});
