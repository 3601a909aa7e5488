import { existsSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineBridgeConfig, type BridgeConfig } from './config.ts';

export const DEFAULT_CONFIG_FILE = 'bridge.config.ts';

/** A config that cannot be used; the message is one line naming the file and what is wrong. */
export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

/**
 * Imports a config file (TypeScript runs through Node's own type stripping) and validates its
 * default export. `file` is relative to the working directory; default `./bridge.config.ts`.
 */
export async function loadConfigFile(file: string = DEFAULT_CONFIG_FILE): Promise<Readonly<BridgeConfig>> {
  const path = resolve(file);
  const shown = displayPath(path);
  if (!existsSync(path)) {
    const hint = file === DEFAULT_CONFIG_FILE ? '; write one with `eve-flue-bridge init`, or pass --config <file>' : '';
    throw new ConfigFileError(`[eve-flue] ${shown}: no such file${hint}`);
  }
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    throw new ConfigFileError(`[eve-flue] ${shown}: ${problemOf(error)}`);
  }
  if (module.default === undefined) {
    throw new ConfigFileError(`[eve-flue] ${shown}: no default export; end it with \`export default defineBridgeConfig({ agent, ... })\``);
  }
  try {
    return defineBridgeConfig(module.default as BridgeConfig);
  } catch (error) {
    throw new ConfigFileError(`[eve-flue] ${shown}: ${problemOf(error)}`);
  }
}

/** The file as the person typed it would show it: relative when under the working directory. */
function displayPath(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere.startsWith('..') || fromHere === '' ? path : `.${sep}${fromHere}`;
}

/** The first line of an error, without the `[eve-flue]` tag the file name now leads. */
function problemOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.replace(/^\[eve-flue\]\s*/, '');
}
