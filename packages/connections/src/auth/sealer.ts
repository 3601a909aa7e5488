import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM for everything the bridge keeps about sign-ins: tokens, flows, client secrets. */
export class Sealer {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`[eve-flue] the token key must be ${KEY_BYTES} bytes (base64 in BRIDGE_TOKEN_KEY).`);
    this.#key = key;
  }

  /** A fresh random key: values sealed with it are unreadable once the process ends. */
  static ephemeral(): Sealer {
    return new Sealer(randomBytes(KEY_BYTES));
  }

  seal(value: unknown, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(associatedData));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /**
   * Opens a value, or undefined when it cannot be (sealed under another key, tampered with): a
   * stored value nobody can read is as good as absent, and must not block a new sign-in.
   */
  openOrForget<T>(sealed: string, associatedData: string): T | undefined {
    try {
      return this.open<T>(sealed, associatedData);
    } catch {
      return undefined;
    }
  }

  /** Opens a sealed value; `associatedData` must match, so a value cannot be moved to another key. */
  open<T>(sealed: string, associatedData: string): T {
    const bytes = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const body = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    return JSON.parse(body.toString('utf8')) as T;
  }
}

/**
 * The token key: from `base64Key` (config or BRIDGE_TOKEN_KEY) when given; in development, from
 * (or newly written to) `file`, readable by the owner only. Production without a key fails.
 */
export function loadSealer(options: { base64Key?: string; file?: string; production: boolean }): Sealer {
  if (options.base64Key) return new Sealer(Buffer.from(options.base64Key, 'base64'));
  if (options.production) {
    throw new Error('[eve-flue] production mode needs a token key: set BRIDGE_TOKEN_KEY to 32 random bytes, base64 (openssl rand -base64 32).');
  }
  if (!options.file) return Sealer.ephemeral();
  if (!existsSync(options.file)) {
    mkdirSync(dirname(options.file), { recursive: true });
    writeFileSync(options.file, randomBytes(KEY_BYTES).toString('base64'), { mode: 0o600 });
  }
  chmodSync(options.file, 0o600);
  return new Sealer(Buffer.from(readFileSync(options.file, 'utf8').trim(), 'base64'));
}
