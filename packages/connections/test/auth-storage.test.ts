import { mkdtemp, rm, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { loadSealer, Sealer, SqliteAuthStore, type PendingFlow, type TokenSet } from '@eve-flue/connections';

const tokens: TokenSet = { accessToken: 'at-secret-value', refreshToken: 'rt-secret-value', tokenType: 'bearer', issuer: 'https://as.example', clientId: 'c1' };

describe('sealing', () => {
  test('round-trips, and refuses a value moved to another key or tampered with', () => {
    const sealer = Sealer.ephemeral();
    const sealed = sealer.seal(tokens, 'token:a:demo');
    expect(sealed).not.toContain('secret');
    expect(sealer.open(sealed, 'token:a:demo')).toEqual(tokens);
    expect(() => sealer.open(sealed, 'token:b:demo')).toThrow();
    const bytes = Buffer.from(sealed, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    expect(() => sealer.open(bytes.toString('base64'), 'token:a:demo')).toThrow();
    expect(() => Sealer.ephemeral().open(sealed, 'token:a:demo')).toThrow();
  });

  test('production needs a key; development writes one, readable by its owner only', async () => {
    expect(() => loadSealer({ production: true })).toThrow(/BRIDGE_TOKEN_KEY/);
    expect(() => loadSealer({ production: true, base64Key: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
    const dir = await mkdtemp(join(tmpdir(), 'eve-flue-key-'));
    try {
      const file = join(dir, 'token.key');
      const first = loadSealer({ production: false, file });
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(Buffer.from(readFileSync(file, 'utf8'), 'base64')).toHaveLength(32);
      expect(loadSealer({ production: false, file }).open(first.seal('x', 'ad'), 'ad')).toBe('x');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the SQLite auth store', () => {
  test('keeps tokens sealed on disk, and a flow can be taken only once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eve-flue-store-'));
    const file = join(dir, 'connections.db');
    const store = new SqliteAuthStore(file, Sealer.ephemeral());
    try {
      await store.putToken('principal:alice', 'demo', tokens);
      expect(await store.getToken('principal:alice', 'demo')).toEqual(tokens);
      expect(await store.getToken('principal:bob', 'demo')).toBeUndefined();
      const flow: PendingFlow = {
        id: 'att_1',
        secretHash: 'h',
        connection: 'demo',
        subject: 'principal:alice',
        authorizationUrl: 'https://as.example/auth?state=att_1.s',
        redirectUri: 'http://127.0.0.1/eve/v1/oauth/callback',
        backend: { kind: 'oauth2', verifier: 'verifier-secret-value', issuer: 'https://issuer.example', clientId: 'client' },
        createdAt: 1,
        expiresAt: Date.now() + 60_000,
      };
      await store.putFlow(flow);
      const [first, second] = await Promise.all([store.takeFlow('att_1'), store.takeFlow('att_1')]);
      expect([first, second].filter(Boolean)).toEqual([flow]);
      const disk = readFileSync(file).toString('latin1') + readFileSync(`${file}-wal`).toString('latin1');
      for (const secret of ['at-secret-value', 'rt-secret-value', 'verifier-secret-value']) expect(disk).not.toContain(secret);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
