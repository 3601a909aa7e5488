import { AsyncLocalStorage } from 'node:async_hooks';
import { instrument } from '@flue/runtime';
import type { StartOptions } from '@flue/runtime/node';

type Provider = NonNullable<StartOptions['providers']>[number];

/** Where a model call runs: the Flue instance, submission and model turn. */
export interface ModelCallScope {
  instanceId: string;
  submissionId: string;
  turnId: string;
}

export type LiveDelta = { kind: 'text' | 'reasoning'; delta: string };

/**
 * Text and reasoning deltas as the model produces them. Flue's `observe()` delivers deltas up to
 * a second late (it writes them durably first, in batches); wrapping the providers handed to Flue
 * sees each one at once. An execution interceptor (`instrument()`, documented) tells which
 * instance, submission and model turn a provider call belongs to.
 */
export class LiveTap {
  readonly #scope = new AsyncLocalStorage<Partial<ModelCallScope>>();
  readonly #onDelta: (scope: ModelCallScope, delta: LiveDelta) => void;
  readonly #uninstall: () => Promise<void>;

  constructor(onDelta: (scope: ModelCallScope, delta: LiveDelta) => void) {
    this.#onDelta = onDelta;
    this.#uninstall = instrument({
      observe: () => undefined,
      dispose: () => undefined,
      interceptor: (operation, context, next) => {
        if (operation.type === 'agent' && context.instanceId && context.submissionId) {
          return this.#scope.run({ instanceId: context.instanceId, submissionId: context.submissionId }, next);
        }
        if (operation.type === 'model') return this.#scope.run({ ...this.#scope.getStore(), turnId: operation.turnId }, next);
        return next();
      },
    });
  }

  /** The provider, reporting each text and reasoning delta of calls made inside a Flue submission. */
  wrap(provider: Provider): Provider {
    const tap = (stream: { push(event: unknown): void }) => {
      const scope = this.#scope.getStore();
      if (!scope?.instanceId || !scope.submissionId || !scope.turnId) return stream;
      const full = scope as ModelCallScope;
      const push = stream.push.bind(stream);
      stream.push = (event: unknown) => {
        const e = event as { type?: string; delta?: unknown };
        if (e.type === 'text_delta' && typeof e.delta === 'string') this.#onDelta(full, { kind: 'text', delta: e.delta });
        if (e.type === 'thinking_delta' && typeof e.delta === 'string') this.#onDelta(full, { kind: 'reasoning', delta: e.delta });
        push(event);
      };
      return stream;
    };
    // A proxy keeps everything else about the provider (its prototype, its other members) as it is.
    return new Proxy(provider, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if ((property !== 'stream' && property !== 'streamSimple') || typeof value !== 'function') return value;
        return (...args: unknown[]) => tap(Reflect.apply(value, target, args) as { push(event: unknown): void });
      },
    });
  }

  close(): Promise<void> {
    return this.#uninstall();
  }
}
