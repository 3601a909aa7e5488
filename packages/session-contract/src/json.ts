/** JSON from another process, or undefined when it is not JSON: for a schema to check next. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
