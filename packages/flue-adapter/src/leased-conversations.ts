import { parseSessionStorageKey, type AgentSubmission, type PersistenceAdapter } from '@flue/runtime/adapter';
import { overridingSubmissionStore } from './store-overrides.ts';

/**
 * Flue allows one live owner per conversation; with several instances on one shared Flue store,
 * every instance's coordinator would otherwise scan, claim and recover every conversation. This
 * narrows what the coordinator of this process sees to the conversations whose Flue instance
 * `owns` (the bridge's session lease) says are held here:
 * - queued work to claim, unready work to materialize and running work to supervise: only held ones;
 * - expired work to recover: a held conversation's running submission counts as expired at once,
 *   whatever its Flue lease says. Holding the session lease proves the previous owner lost it
 *   (it died, or will be fenced), and Flue skips the attempts it is running itself. Recovery then
 *   replaces the attempt, which fences any late write of the old owner.
 * Settlement finalization stays unscoped: Flue only finalizes a settlement whose Flue lease lapsed.
 */
export function leasedConversations(adapter: PersistenceAdapter, owns: (instanceId: string) => boolean): PersistenceAdapter {
  const held = (submission: AgentSubmission) => {
    const lane = parseSessionStorageKey(submission.sessionKey);
    return lane !== undefined && owns(lane.instanceId);
  };
  return overridingSubmissionStore(adapter, (inner) => ({
    listRunnableSubmissions: async () => (await inner.listRunnableSubmissions()).filter(held),
    listUnreadySubmissions: async () => (await inner.listUnreadySubmissions()).filter(held),
    listRunningSubmissions: async () => (await inner.listRunningSubmissions()).filter(held),
    listExpiredSubmissions: async () => (await inner.listRunningSubmissions()).filter(held),
  }));
}
