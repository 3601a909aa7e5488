/**
 * Flue's adapter contract suites (`@flue/runtime/test-utils`) are written for vitest; they use
 * describe/it/afterEach/expect, which jest provides with the same meaning, and vitest's
 * `toThrowError`, the alias jest 30 dropped for `toThrow`.
 */
import { expect } from '@jest/globals';

expect.extend({
  toThrowError(received: unknown, expected?: unknown) {
    let thrown: unknown = received;
    if (typeof received === 'function') {
      thrown = undefined;
      try {
        (received as () => unknown)();
      } catch (error) {
        thrown = error;
      }
    }
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    const pass =
      thrown !== undefined &&
      (expected === undefined ||
        (typeof expected === 'function' && thrown instanceof expected) ||
        (typeof expected === 'string' && message.includes(expected)) ||
        (expected instanceof RegExp && expected.test(message)));
    return { pass, message: () => `expected ${String(expected)} to be thrown, got ${message}` };
  },
});

export { afterEach, describe, expect, it } from '@jest/globals';
