import type { AdapterFactory, AdapterPayload } from 'oidc-provider';

/** Models whose records belong to a grant, so revoking the grant removes them. */
const GRANT_BOUND = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

interface StoredRecord {
  payload: AdapterPayload;
  expiresAt: number;
}

/**
 * Storage for one demo authorization server, gone with the process. oidc-provider's built-in memory adapter
 * is shared by every provider in the process and announces itself on stderr at each start.
 */
export function createMemoryAdapter(): AdapterFactory {
  const records = new Map<string, StoredRecord>();
  const sessionIdByUid = new Map<string, string>();
  const keysByGrantId = new Map<string, Set<string>>();

  const live = (key: string): AdapterPayload | undefined => {
    const record = records.get(key);
    if (record && record.expiresAt <= Date.now()) records.delete(key);
    return record && record.expiresAt > Date.now() ? record.payload : undefined;
  };

  return (model) => {
    const keyOf = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        const key = keyOf(id);
        records.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
        if (model === 'Session' && payload.uid) sessionIdByUid.set(payload.uid, id);
        if (GRANT_BOUND.has(model) && payload.grantId) {
          const keys = keysByGrantId.get(payload.grantId) ?? new Set<string>();
          keysByGrantId.set(payload.grantId, keys.add(key));
        }
      },
      async find(id) {
        return live(keyOf(id));
      },
      async findByUid(uid) {
        const id = sessionIdByUid.get(uid);
        return id === undefined ? undefined : live(keyOf(id));
      },
      // The demo has no device flow, so there are no user codes.
      async findByUserCode() {
        return undefined;
      },
      async consume(id) {
        const payload = live(keyOf(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        records.delete(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        for (const key of keysByGrantId.get(grantId) ?? []) records.delete(key);
        keysByGrantId.delete(grantId);
      },
    };
  };
}
