/** Reads an async iterable to its end. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Reads until `done` accepts an item (inclusive), then stops the iterator. */
export async function readUntil<T>(items: AsyncIterable<T>, done: (item: T) => boolean): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of items) {
    seen.push(item);
    if (done(item)) break;
  }
  return seen;
}

export const typesOf = (events: readonly { type: string }[]): string[] => events.map((e) => e.type);

/** Eve names, always: no event a client can read carries a Flue `mcp__` tool name. */
export function flueNamesIn(events: readonly unknown[]): string[] {
  return [...new Set(JSON.stringify(events).match(/mcp__[A-Za-z0-9_-]*/g) ?? [])];
}
