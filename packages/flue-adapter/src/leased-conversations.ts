import { parseSessionStorageKey, type AgentSubmission, type AgentSubmissionStore, type PersistenceAdapter } from '@flue/runtime/adapter';

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
  return {
    ...(adapter.migrate ? { migrate: () => adapter.migrate!() } : {}),
    ...(adapter.close ? { close: () => adapter.close!() } : {}),
    async connect() {
      const stores = await adapter.connect();
      const inner = stores.submissionStore;
      const scoped: Partial<AgentSubmissionStore> = {
        listRunnableSubmissions: async () => (await inner.listRunnableSubmissions()).filter(held),
        listUnreadySubmissions: async () => (await inner.listUnreadySubmissions()).filter(held),
        listRunningSubmissions: async () => (await inner.listRunningSubmissions()).filter(held),
        listExpiredSubmissions: async () => (await inner.listRunningSubmissions()).filter(held),
      };
      const submissionStore = new Proxy(inner, {
        get(target, property) {
          const own = scoped[property as keyof AgentSubmissionStore];
          if (own) return own;
          const value = Reflect.get(target, property) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      return { ...stores, submissionStore };
    },
  };
}
