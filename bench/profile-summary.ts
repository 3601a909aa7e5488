/**
 * Sums a .cpuprofile's self time by owner: each sample goes to the nearest frame on its stack
 * that belongs to a package (one of this workspace's, or one under node_modules), so Node's
 * internals and native calls count for the code that called them; GC, idle and samples with no
 * package frame are listed on their own. Prints the bridge's share of the non-idle time.
 * Run: node bench/profile-summary.ts <file.cpuprofile> [rows]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const BRIDGE = new Set(['@eve-flue/eve-protocol', '@eve-flue/compat-server', '@eve-flue/flue-adapter', '@eve-flue/connections', '@eve-flue/bridge']);
const WORKSPACE_DIRS: Record<string, string> = {
  'packages/eve-protocol/': '@eve-flue/eve-protocol',
  'packages/compat-server/': '@eve-flue/compat-server',
  'packages/flue-adapter/': '@eve-flue/flue-adapter',
  'packages/connections/': '@eve-flue/connections',
  'apps/bridge/': '@eve-flue/bridge',
};

/** The package a frame's URL belongs to, or undefined for Node internals, natives and pseudo-frames. */
function packageOf(url: string): string | undefined {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    const pkg = scope!.startsWith('@') ? `${scope}/${name}` : scope!;
    // pnpm links workspace packages under node_modules/.pnpm or node_modules/@eve-flue.
    return pkg === '.pnpm' ? packageOf(url.slice(modules + 1).replace(/^node_modules\/\.pnpm\/[^/]+\//, '/')) : pkg;
  }
  for (const [dir, name] of Object.entries(WORKSPACE_DIRS)) if (url.includes(`/${dir}`)) return name;
  if (url.includes('/bench/')) return 'bench';
  return undefined;
}

const [file, rows = '12'] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [rows]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const ownerCache = new Map<number, string>();
function ownerOf(id: number): string {
  const cached = ownerCache.get(id);
  if (cached) return cached;
  const node = byId.get(id)!;
  const name = node.callFrame.functionName;
  let owner: string;
  if (name === '(garbage collector)' || name === '(idle)' || name === '(program)') owner = name;
  else owner = packageOf(node.callFrame.url) ?? (parent.has(id) ? ownerOf(parent.get(id)!) : '(node, no package caller)');
  if (owner === '(root)') owner = '(node, no package caller)';
  ownerCache.set(id, owner);
  return owner;
}

const totals = new Map<string, number>();
profile.samples.forEach((id, i) => totals.set(ownerOf(id), (totals.get(ownerOf(id)) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const idle = totals.get('(idle)') ?? 0;
const busy = [...totals.values()].reduce((a, b) => a + b, 0) - idle;
const bridge = [...totals].filter(([owner]) => BRIDGE.has(owner)).reduce((sum, [, t]) => sum + t, 0);
console.log(`${file}: ${(busy / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle`);
for (const [owner, time] of [...totals].filter(([o]) => o !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
  console.log(`  ${((time / busy) * 100).toFixed(1).padStart(5)}%  ${owner}${BRIDGE.has(owner) ? '  (bridge)' : ''}`);
}
console.log(`bridge's own share of the busy time: ${((bridge / busy) * 100).toFixed(1)}%`);
