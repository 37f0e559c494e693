#!/usr/bin/env node
// Scheduling throughput of the pure scheduling cycle (`schedulePod`: preFilter → filter → preScore →
// score → pick) over 1000 and 5000 fake nodes, with the default profile: the built-in NodeUnschedulable
// and NodeReady filters plus the resources-fit filter and the least-allocated score.
// Baseline in the same run: a loop that only walks the same NodeInfos for each pod (reads two numbers
// per node and keeps the best), i.e. the cost of touching every node without any plugin.
// Each measurement runs for a fixed time budget, so the whole bench stays well under 20 s.
// Needs `npm run build` first (it imports the packages' dist).
import { Kernel } from '@skiff/kernel';
import { addPodToNodeInfo, buildProfile, collectSchedulerPlugins, createNodeInfo, schedulePod } from '@skiff/scheduler';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import leastAllocated from '@skiff/plugin-scheduler-least-allocated';

const SIZES = [1000, 5000];
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 2000);
const PENDING_PODS = 256;

/** mulberry32: the same cluster every run. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = random(7);
const pick = (items) => items[Math.floor(rand() * items.length)];
const CPUS = ['100m', '250m', '500m', '1', '2'];
const MEMORY = ['64Mi', '128Mi', '256Mi', '1Gi', '2Gi'];

function pod(name, nodeName) {
  // One pod in five sets no requests (counts as 100m / 200Mi when scoring).
  const requests = rand() < 0.2 ? undefined : { cpu: pick(CPUS), memory: pick(MEMORY) };
  return {
    metadata: { name, namespace: 'bench', uid: name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'main', image: 'nginx', ...(requests ? { resources: { requests } } : {}) }] },
  };
}

/** Nodes filled to 30–90 % of their cpu with bound pods, so some are full and most have room. */
function cluster(size) {
  const infos = [];
  for (let i = 0; i < size; i++) {
    const name = `node-${i + 1}`;
    const cores = pick([8, 16, 32]);
    const node = {
      metadata: { name },
      spec: { unschedulable: i % 97 === 0 },
      status: {
        allocatable: { cpu: String(cores), memory: `${cores * 4}Gi`, pods: 110 },
        conditions: [{ type: 'Ready', status: i % 211 === 0 ? 'False' : 'True' }],
      },
    };
    const info = createNodeInfo(node);
    const target = cores * 1000 * (0.3 + 0.6 * rand());
    for (let j = 0; info.requested.milliCPU < target && j < 100; j++) addPodToNodeInfo(info, pod(`${name}-pod-${j}`, name));
    infos.push(info);
  }
  return infos;
}

function measure(label, body) {
  let cycles = 0;
  for (let i = 0; i < 50; i++) body(i); // warm-up
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < BUDGET_MS) {
    for (let i = 0; i < 20; i++) body(cycles++);
    elapsed = performance.now() - started;
  }
  return { label, cycles, elapsed };
}

// The scheduler's registry as it fills it: its built-in filters, then what the plugins register.
const registry = collectSchedulerPlugins(new Kernel({ config: { logLevel: 'silent' } }).use(resourcesFit).use(leastAllocated));
const profile = buildProfile(registry);
const pending = Array.from({ length: PENDING_PODS }, (_, i) => pod(`pending-${i}`));

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
let sink = 0;
for (const size of SIZES) {
  const nodes = cluster(size);
  const tieBreak = random(size);
  const scheduled = measure('schedulePod', (i) => {
    const result = schedulePod(profile, new Map(), pending[i % PENDING_PODS], nodes, tieBreak);
    if (result.nodeName) sink++;
  });
  const baseline = measure('baseline', () => {
    let best = -Infinity;
    for (const info of nodes) {
      const free = info.allocatable.milliCPU - info.requested.milliCPU + (info.allocatable.memory - info.requested.memory) / 1e9;
      if (free > best) best = free;
    }
    sink += best > 0 ? 1 : 0;
  });
  const perPodCycle = (scheduled.elapsed * 1000) / scheduled.cycles;
  const perPodBase = (baseline.elapsed * 1000) / baseline.cycles;
  console.log(`${fmt(size)} nodes`);
  console.log(
    `  schedulePod (2 filters built in + resources-fit + least-allocated): ${fmt(scheduled.cycles / (scheduled.elapsed / 1000))} pods/s, ${fmt(perPodCycle, 1)} µs/pod, ${fmt((perPodCycle * 1000) / size, 1)} ns/node`,
  );
  console.log(
    `  baseline (walk the nodes only):                                     ${fmt(baseline.cycles / (baseline.elapsed / 1000))} pods/s, ${fmt(perPodBase, 1)} µs/pod, ${fmt((perPodBase * 1000) / size, 1)} ns/node`,
  );
  console.log(`  cycle / baseline: ${fmt(perPodCycle / perPodBase, 1)}×`);
}
if (sink < 0) console.log(sink);
