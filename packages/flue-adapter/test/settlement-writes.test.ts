import { expect, test } from '@jest/globals';
import { LEASE_DURATION_MS, type AgentSubmissionStore, type PersistenceAdapter } from '@flue/runtime/adapter';
import { sqlite } from '@flue/runtime/node';
import { SettlementWrites } from '../src/settlement-writes.ts';

const attempt = { submissionId: 'sub-1', attemptId: 'attempt-1' };
const recordId = 'record_dispatch-submission:sub-1:settled';
const settlement = {
  recordId,
  record: {
    v: 1,
    id: recordId,
    type: 'submission_settled',
    conversationId: 'conversation-1',
    harness: 'default',
    session: 'default',
    timestamp: '2026-12-02T00:00:00.000Z',
    submissionId: attempt.submissionId,
    attemptId: attempt.attemptId,
    outcome: 'completed',
  },
} as Parameters<AgentSubmissionStore['reserveSubmissionSettlement']>[1];

/** Flue's own in-memory SQLite store, watched, with one submission running under `attempt`. */
async function runningSubmission(adapter: PersistenceAdapter = sqlite()): Promise<{ writes: SettlementWrites; store: AgentSubmissionStore }> {
  const writes = new SettlementWrites();
  const watched = writes.watch(adapter);
  await watched.migrate?.();
  const store = (await watched.connect()).submissionStore;
  await store.admitDispatch({ submissionId: attempt.submissionId, agent: 'assistant', id: 'instance-1', message: { kind: 'signal', type: 'test.event', body: 'Hello' }, acceptedAt: '2026-12-02T00:00:00.000Z' });
  await store.markSubmissionCanonicalReady(attempt.submissionId);
  await store.claimSubmission({ ...attempt, ownerId: 'this-process', leaseExpiresAt: Date.now() + LEASE_DURATION_MS });
  return { writes, store };
}

/** Whether `promise` has settled by the time every callback queued before it has run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

test('a reserved settlement is owed its row write until Flue finalizes it', async () => {
  const { writes, store } = await runningSubmission();
  expect(await isSettled(writes.written(attempt.submissionId))).toBe(true);
  expect(await store.reserveSubmissionSettlement(attempt, settlement)).not.toBeNull();
  const written = writes.written(attempt.submissionId);
  expect(await isSettled(written)).toBe(false);
  expect(await store.finalizeSubmissionSettlement(attempt, recordId)).toBe(true);
  expect(await isSettled(written)).toBe(true);
  expect((await store.getSubmission(attempt.submissionId))?.status).toBe('settled');
});

test('a finalization that fails (the store went away) owes nothing more: Flue recovers the row later', async () => {
  const failing = sqlite();
  const { writes, store } = await runningSubmission({
    ...failing,
    async connect() {
      const stores = await failing.connect();
      const inner = stores.submissionStore;
      const submissionStore = Object.assign(Object.create(inner) as AgentSubmissionStore, {
        reserveSubmissionSettlement: inner.reserveSubmissionSettlement.bind(inner),
        finalizeSubmissionSettlement: () => Promise.reject(new Error('connection lost')),
      });
      return { ...stores, submissionStore };
    },
  });
  await store.reserveSubmissionSettlement(attempt, settlement);
  const written = writes.written(attempt.submissionId);
  await expect(store.finalizeSubmissionSettlement(attempt, recordId)).rejects.toThrow('connection lost');
  expect(await isSettled(written)).toBe(true);
});

test('a refused reservation owes nothing', async () => {
  const { writes, store } = await runningSubmission();
  expect(await store.reserveSubmissionSettlement({ ...attempt, attemptId: 'someone-else' }, settlement)).toBeNull();
  expect(await isSettled(writes.written(attempt.submissionId))).toBe(true);
});
