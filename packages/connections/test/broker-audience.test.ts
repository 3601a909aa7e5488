import { expect, test } from '@jest/globals';
import { Sealer, SignInBroker, SqliteAuthStore, type SignInBackend, type TokenSet } from '@eve-flue/connections';

const unused = async (): Promise<never> => {
  throw new Error('not called');
};
const backend: SignInBackend = { begin: unused, finish: unused, refresh: unused, revoke: unused };

test('a held token is sent only to the resource it was issued for (RFC 8707)', async () => {
  const store = new SqliteAuthStore(':memory:', Sealer.ephemeral());
  const broker = new SignInBroker({ store, backends: new Map([['docs', backend]]), publicUrl: 'http://127.0.0.1:1' });
  const tokens: TokenSet = { accessToken: 'issued-for-a', tokenType: 'bearer', issuer: 'https://as.example', clientId: 'c', resource: 'https://a.example/mcp' };
  await store.putToken('session:s1', 'docs', tokens);
  try {
    expect(await broker.token('docs', 'session:s1', 'https://a.example/mcp')).toBe('issued-for-a');
    expect(await broker.token('docs', 'session:s1', 'https://b.example/mcp')).toBeUndefined();
    expect(await broker.token('docs', 'session:s1', 'https://a.example/other')).toBeUndefined();
  } finally {
    await store.close();
  }
});
