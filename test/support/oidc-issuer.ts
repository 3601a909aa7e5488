import { randomUUID } from 'node:crypto';
import express from 'express';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { listen } from './listen.ts';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

export interface OidcIssuer {
  /** `http://127.0.0.1:<port>`: the issuer identifier, as discovery names it. */
  issuer: string;
  /** A token for `sub`, signed with the current key; `claims` override the defaults (aud, exp, …). */
  token(sub: string, claims?: JWTPayload, options?: { kid?: string; key?: CryptoKey }): Promise<string>;
  /** The current key's kid and SPKI PEM (public). */
  current(): Promise<{ kid: string; publicPem: string }>;
  /** Replaces the signing key: the JWKS serves only the new one from now on. */
  rotate(): Promise<void>;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  close(): Promise<void>;
}

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid: randomUUID(), privateKey, publicKey };
}

/** An OpenID Connect issuer on loopback: discovery and JWKS served, RS256 keys made with jose. */
export async function startOidcIssuer(audience: string): Promise<OidcIssuer> {
  let key = await newKey();
  let fetches = 0;
  const app = express();
  let issuer = '';
  app.get('/.well-known/openid-configuration', (_request, response) => {
    response.json({ issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
  });
  app.get('/jwks', async (_request, response) => {
    fetches++;
    response.json({ keys: [{ ...(await exportJWK(key.publicKey)), kid: key.kid, alg: 'RS256', use: 'sig' }] });
  });
  const listening = await listen(app);
  issuer = listening.url;
  return {
    issuer,
    async token(sub, claims = {}, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, sub, aud: audience, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? key.kid })
        .sign(options.key ?? key.privateKey);
    },
    async current() {
      return { kid: key.kid, publicPem: await exportSPKI(key.publicKey) };
    },
    async rotate() {
      key = await newKey();
    },
    jwksFetches: () => fetches,
    close: () => listening.close(),
  };
}
