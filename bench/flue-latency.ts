/**
 * Time from a text delta leaving the model to (a) Flue's own observe() subscribers, the Flue
 * runtime alone, and (b) an Eve client's NDJSON line through the bridge (which taps the model's
 * stream, see flue-adapter/src/live-tap.ts), in the same run.
 * The model is the demo's scripted model, paced at 200 tokens/s. Run: node bench/flue-latency.ts
 */
import { observe } from '@flue/runtime';
import { silentLogger } from '@eve-flue/compat-server';
import { startBridge } from '@eve-flue/bridge';
import { startDemoStack } from '@eve-flue/demo';
import { fmt, percentile } from './lib.ts';

type Timed = { text: string; at: number };
const fromModel: Timed[] = [];
const fromFlue: Timed[] = [];
const fromClient: Timed[] = [];

const demo = await startDemoStack({ store: 'memory', port: 0, mode: 'development', webPage: false });
// Tap the model's event stream: every delta is timestamped as the provider pushes it.
const provider = demo.config.providers![0]! as unknown as Record<'stream' | 'streamSimple', (...args: unknown[]) => { push: (e: unknown) => void }>;
for (const method of ['stream', 'streamSimple'] as const) {
  const original = provider[method]!.bind(provider);
  provider[method] = (...args: unknown[]) => {
    const stream = original(...args);
    const push = stream.push.bind(stream);
    stream.push = (event) => {
      const e = event as { type: string; delta?: string };
      if (e.type === 'text_delta') fromModel.push({ text: e.delta!, at: performance.now() });
      push(event);
    };
    return stream;
  };
}
const unobserve = observe((o) => {
  if (o.type === 'text_delta') fromFlue.push({ text: o.text, at: performance.now() });
});
const bridge = await startBridge(demo.config, { logger: silentLogger });
try {
  const created = (await (await fetch(`${bridge.url}/eve/v1/session`, { method: 'POST' })).json()) as { sessionId: string };
  const stream = await fetch(`${bridge.url}/eve/v1/session/${created.sessionId}/stream`);
  const reader = stream.body!.getReader();
  await fetch(`${bridge.url}/eve/v1/session/${created.sessionId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: '/sleep 5000' }),
  });
  const decoder = new TextDecoder();
  let buffered = '';
  for (let done = false; !done; ) {
    const chunk = await reader.read();
    const now = performance.now();
    buffered += decoder.decode(chunk.value, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const event = JSON.parse(line) as { type: string; data: { messageDelta?: string } };
      if (event.type === 'message.appended') fromClient.push({ text: event.data.messageDelta!, at: now });
      if (event.type === 'session.waiting') done = true;
    }
  }
  await reader.cancel();
} finally {
  unobserve();
  await bridge.close();
  await demo.close();
}

const n = Math.min(fromModel.length, fromFlue.length, fromClient.length);
if (fromModel.slice(0, n).some((d, i) => d.text !== fromClient[i]!.text || d.text !== fromFlue[i]!.text)) throw new Error('delta streams do not line up');
const lag = (later: Timed[], earlier: Timed[]) => later.slice(0, n).map((d, i) => d.at - earlier[i]!.at).sort((a, b) => a - b);
const report = (label: string, values: number[]) =>
  console.log(`${label.padEnd(44)} p50 ${values.length ? percentile(values, 50).toFixed(1) : '-'} ms   p99 ${percentile(values, 99).toFixed(1)} ms   max ${values.at(-1)?.toFixed(1)} ms`);
console.log(`${fmt(n)} text deltas over about 5 s (Node ${process.version})`);
report('model → Flue observe() (Flue runtime alone)', lag(fromFlue, fromModel));
report('model → Eve client NDJSON line (bridge)', lag(fromClient, fromModel));
