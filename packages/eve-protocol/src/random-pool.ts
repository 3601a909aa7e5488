const POOL_BYTES = 4096;

/**
 * A random source for ULIDs: floats in [0, 1) drawn from a pool of cryptographically random
 * bytes that is refilled in one `getRandomValues` call when spent. ulidx's default source makes
 * one such call per character (16 for an id in a fresh millisecond), which showed in profiles.
 * Each float is one byte / 256, so a ULID character (`floor(x * 32)`) is uniform.
 */
export function pooledRandom(poolBytes: number = POOL_BYTES): () => number {
  const pool = new Uint8Array(poolBytes);
  let next = poolBytes;
  return () => {
    if (next === poolBytes) {
      globalThis.crypto.getRandomValues(pool);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}
