import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The data folder holds conversations and sealed tokens: it is this user's alone (0700), and so
 * is every file in it (0600). SQLite gives its `-wal` and `-shm` files the mode of their database.
 */
export function prepareDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  restrictDataFiles(dir);
}

/** Makes every file already in the folder (and its subfolders) 0600, its subfolders 0700. */
export function restrictDataFiles(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      chmodSync(path, 0o700);
      restrictDataFiles(path);
    } else if (entry.isFile()) chmodSync(path, 0o600);
  }
}
