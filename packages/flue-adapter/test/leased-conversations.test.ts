import { describe, expect, test } from '@jest/globals';
import { LEASE_DURATION_MS, type AgentSubmissionStore, type DispatchInput } from '@flue/runtime/adapter';
import { sqlite } from '@flue/runtime/node';
import { leasedConversations } from '../src/leased-conversations.ts';

/** Flue's own in-memory SQLite store, seen through the lease scope: only instance `held` is ours. */
async function scopedStore(): Promise<AgentSubmissionStore> {
  const adapter = leasedConversations(sqlite(), (instanceId) => instanceId === 'held');
  await adapter.migrate?.();
  return (await adapter.connect()).submissionStore;
}

const dispatch = (submissionId: string, id: string): DispatchInput => ({
  submissionId,
  agent: 'assistant',
  id,
  message: { kind: 'signal', type: 'test.event', body: 'Hello' },
  acceptedAt: '2026-06-03T00:00:00.000Z',
});

async function admitReady(store: AgentSubmissionStore, submissionId: string, instanceId: string): Promise<void> {
  await store.admitDispatch(dispatch(submissionId, instanceId));
  await store.markSubmissionCanonicalReady(submissionId);
}

describe('leasedConversations', () => {
  test('the coordinator only sees queued and running work of conversations held here', async () => {
    const store = await scopedStore();
    await admitReady(store, 'mine', 'held');
    await admitReady(store, 'theirs', 'elsewhere');
    expect((await store.listRunnableSubmissions()).map((s) => s.submissionId)).toEqual(['mine']);
    const lease = { ownerId: 'other-process', leaseExpiresAt: Date.now() + LEASE_DURATION_MS };
    await store.claimSubmission({ submissionId: 'theirs', attemptId: 'a1', ...lease });
    expect(await store.listRunningSubmissions()).toEqual([]);
    // Unscoped lookups still answer: Flue reads and settles by id.
    expect((await store.getSubmission('theirs'))?.status).toBe('running');
  });

  test("a held conversation's running work counts as expired at once, whatever its Flue lease says", async () => {
    const store = await scopedStore();
    await admitReady(store, 'orphaned', 'held');
    await admitReady(store, 'alive-elsewhere', 'elsewhere');
    const lease = { ownerId: 'dead-process', leaseExpiresAt: Date.now() + LEASE_DURATION_MS };
    await store.claimSubmission({ submissionId: 'orphaned', attemptId: 'a1', ...lease });
    await store.claimSubmission({ submissionId: 'alive-elsewhere', attemptId: 'a2', ...lease });
    expect((await store.listExpiredSubmissions()).map((s) => s.submissionId)).toEqual(['orphaned']);
  });
});
