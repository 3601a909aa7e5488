/** The soak loop bench/soak.ts runs against the bridge and against Flue alone. */
export interface Sample {
  sessions: number;
  rss: number;
  heapUsed: number;
}

export interface SoakResult {
  samples: Sample[];
  seconds: number;
}

export interface SoakOptions {
  sessions: number;
  /** How many times memory is sampled as sessions accumulate (evenly spaced). */
  samples: number;
  /** Runs session `i`'s one turn to its end. */
  turn: (i: number) => Promise<void>;
  memory: () => Promise<{ rss: number; heapUsed: number }>;
  /** Hears each sample as it is taken (a long run shows its progress). */
  onSample?: (sample: Sample) => void;
}

const CONCURRENCY = 8;

/** Runs `sessions` one-turn sessions, 8 at a time, sampling memory every `sessions / samples`. */
export async function runSoak({ sessions, samples: count, turn, memory, onSample }: SoakOptions): Promise<SoakResult> {
  const every = Math.max(1, Math.floor(sessions / count));
  const samples: Sample[] = [{ sessions: 0, ...(await memory()) }];
  const started = performance.now();
  let next = 0;
  let done = 0;
  let sampling: Promise<void> = Promise.resolve();
  const worker = async () => {
    while (next < sessions) {
      const i = next++;
      await turn(i);
      done += 1;
      if (done % every === 0) {
        const at = done;
        sampling = sampling.then(async () => {
          const sample = { sessions: at, ...(await memory()) };
          samples.push(sample);
          onSample?.(sample);
        });
        await sampling;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await sampling;
  if (samples.at(-1)!.sessions !== sessions) samples.push({ sessions, ...(await memory()) });
  return { samples, seconds: (performance.now() - started) / 1000 };
}

/** Least-squares slope of `key` over session count, for samples from the second half, in bytes per session. */
export function secondHalfSlope(samples: readonly Sample[], key: 'rss' | 'heapUsed'): number {
  const total = samples.at(-1)!.sessions;
  const half = samples.filter((s) => s.sessions >= total / 2);
  const n = half.length;
  const mx = half.reduce((a, s) => a + s.sessions, 0) / n;
  const my = half.reduce((a, s) => a + s[key], 0) / n;
  const num = half.reduce((a, s) => a + (s.sessions - mx) * (s[key] - my), 0);
  const den = half.reduce((a, s) => a + (s.sessions - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}
