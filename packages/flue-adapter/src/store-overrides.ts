import type { AgentSubmissionStore, PersistenceAdapter } from '@flue/runtime/adapter';

/** `adapter`, with the methods `override` makes for its submission store in place of the store's own. */
export function overridingSubmissionStore(adapter: PersistenceAdapter, override: (inner: AgentSubmissionStore) => Partial<AgentSubmissionStore>): PersistenceAdapter {
  return {
    ...(adapter.migrate ? { migrate: () => adapter.migrate!() } : {}),
    ...(adapter.close ? { close: () => adapter.close!() } : {}),
    async connect() {
      const stores = await adapter.connect();
      return { ...stores, submissionStore: withOverrides(stores.submissionStore, override(stores.submissionStore)) };
    },
  };
}

/** The rest of the store's methods are bound to it: Flue's stores keep private fields, out of a proxy's reach. */
function withOverrides<T extends object>(inner: T, own: Partial<T>): T {
  return new Proxy(inner, {
    get(target, property) {
      const override = own[property as keyof T];
      if (override) return override;
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
