import type { JsonObject, JsonValue } from './events.ts';

/**
 * A value as JSON carries it (what `JSON.stringify` keeps of it), for what reaches the stream from
 * code that is not JSON by construction: a Flue tool's input or result. Not JSON at all (a bare
 * `undefined`, a function) becomes `null`.
 */
export function toJson(value: unknown): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}

/** `toJson` for what must be an object (a tool call's input): anything else becomes `{}`. */
export function toJsonObject(value: unknown): JsonObject {
  const json = toJson(value);
  return typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as JsonObject) : {};
}
