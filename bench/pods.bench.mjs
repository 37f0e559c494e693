#!/usr/bin/env node
// Pod start on real containers: `skiff up --preset local` in this process (containerd, runc, the CNI bridge), 60
// pods created one after another over HTTPS with the admin kubeconfig, each timed from its create request to the
// watch event that shows it Running. Beside it, the floor measured in the same run: the time spent inside
// containerd's CRI calls for that pod (RunPodSandbox, statuses, CreateContainer, StartContainer, …) and inside
// the CNI plugins (ADD), attributed per pod by wrapping the runtime and the network the kubelet uses. Skiff's
// overhead is create→Running minus that floor. Needs root, containerd, runc and the CNI plugins, and
// `npm run build`; without root it says so and exits 0.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCluster, definePlugin } from '@skiff/kernel';
import { createClientFromKubeconfig } from '@skiff/client';
import { buildTestImages } from '../scripts/test-images.mjs';

const PODS = Number(process.env.BENCH_PODS ?? 60);
const WARMUP = 3;

if (process.getuid?.() !== 0) {
  console.log('pods.bench: skipped, real containers need root');
  process.exit(0);
}

/** Per pod uid: milliseconds spent in CRI calls and in CNI calls. */
const floor = new Map();
const unattributed = { ms: 0, calls: 0 };
const sandboxPod = new Map();
const containerPod = new Map();

/**
 * The calls a pod cannot start without: make the sandbox (and read its namespace path), create and start the
 * container, attach the network. Everything else the kubelet asks (lists, statuses, image checks) is its own
 * choice, and its time counts as Skiff's.
 */
const ESSENTIAL = new Set(['runPodSandbox', 'podSandboxStatus', 'createContainer', 'startContainer', 'add']);

function charge(uid, kind, method, ms) {
  if (!uid) {
    unattributed.ms += ms;
    unattributed.calls++;
    return;
  }
  const entry = floor.get(uid) ?? { cri: 0, cni: 0, essential: 0, calls: 0 };
  entry[kind] += ms;
  if (ESSENTIAL.has(method)) entry.essential += ms;
  entry.calls++;
  floor.set(uid, entry);
}

/** Which pod a CRI call is for, from its arguments (and, for creates, its answer). */
function podOfCall(method, args, result) {
  switch (method) {
    case 'runPodSandbox':
      sandboxPod.set(result, args[0].metadata.uid);
      return args[0].metadata.uid;
    case 'createContainer':
      containerPod.set(result, sandboxPod.get(args[0]));
      return sandboxPod.get(args[0]);
    case 'podSandboxStatus':
    case 'stopPodSandbox':
    case 'removePodSandbox':
      return sandboxPod.get(args[0]);
    case 'listContainers':
      return args[0]?.podSandboxId ? sandboxPod.get(args[0].podSandboxId) : undefined;
    case 'listPodSandbox':
      return args[0]?.labelSelector?.['io.kubernetes.pod.uid'];
    default:
      return typeof args[0] === 'string' ? containerPod.get(args[0]) : undefined;
  }
}

function timed(target, kind, podOf) {
  return new Proxy(target, {
    get(object, key) {
      const value = object[key];
      if (typeof value !== 'function' || key === 'close' || key === 'podCIDR') return typeof value === 'function' ? value.bind(object) : value;
      return async (...args) => {
        const began = performance.now();
        const result = await value.apply(object, args);
        charge(podOf(key, args, result), kind, key, performance.now() - began);
        return result;
      };
    },
  });
}

/** Registers `containerd-measured` and `bridge-measured`: the real ones, with every call timed per pod. */
const measuring = definePlugin({
  name: 'bench-measuring',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.runtimes.tap('bench-measuring', (registry) => {
      const real = registry.get('containerd');
      registry.register({ name: 'containerd-measured', create: async (node) => timed(await real.create(node), 'cri', podOfCall) });
    });
    kernel.hooks.networks.tap('bench-measuring', (registry) => {
      const real = registry.get('bridge');
      registry.register({ name: 'bridge-measured', create: async (node) => timed(await real.create(node), 'cni', (_key, args) => args[0]?.podUid) });
    });
  },
});

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), mean: values.reduce((a, b) => a + b, 0) / values.length };
};
const f = (ms) => ms.toFixed(1).padStart(7);

const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-pods-'));
const images = await buildTestImages({ out: join(dir, 'images') });
const kernel = await createCluster({
  cwd: dir,
  config: {
    preset: 'local',
    dataDir: join(dir, 'data'),
    port: 0,
    logLevel: 'silent',
    plugins: [
      measuring,
      ['@skiff/plugin-cri-containerd', { imports: [images.images.busybox.archive] }],
      ['@skiff/kubelet', { runtime: 'containerd-measured', network: 'bridge-measured' }],
    ],
  },
});
await kernel.start();
const client = await createClientFromKubeconfig(join(dir, 'data', 'admin.kubeconfig'));
const pods = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };

try {
  const watchAbort = new AbortController();
  const runningAt = new Map();
  const waiters = new Map();
  const watching = (async () => {
    for await (const event of client.watch(pods, 'default', { signal: watchAbort.signal })) {
      const pod = event.object;
      if (pod?.status?.phase === 'Running' && !runningAt.has(pod.metadata.name)) {
        runningAt.set(pod.metadata.name, performance.now());
        waiters.get(pod.metadata.name)?.();
      }
    }
  })().catch(() => undefined);

  const manifest = (name) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      containers: [{ name: 'main', image: 'skiff.local/busybox:1', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
    },
  });

  const latencies = [];
  const floors = [];
  const cniFloors = [];
  const essentialFloors = [];
  for (let i = 0; i < PODS + WARMUP; i++) {
    const name = `bench-${i}`;
    const running = new Promise((resolve) => waiters.set(name, resolve));
    const began = performance.now();
    const created = await client.create(pods, manifest(name), 'default');
    await running;
    if (i < WARMUP) continue;
    latencies.push(runningAt.get(name) - began);
    const spent = floor.get(created.metadata.uid) ?? { cri: 0, cni: 0, essential: 0 };
    floors.push(spent.cri);
    cniFloors.push(spent.cri + spent.cni);
    essentialFloors.push(spent.essential);
  }
  watchAbort.abort();
  await watching;

  const total = stats(latencies);
  const cri = stats(floors);
  const criCni = stats(cniFloors);
  const essential = stats(essentialFloors);
  console.log(`pod create → Running, ${PODS} pods one after another (ms; ${WARMUP} warm-up pods not counted)`);
  console.log('                                   p50      p99     mean');
  console.log(`create → Running (Skiff)       ${f(total.p50)}  ${f(total.p99)}  ${f(total.mean)}`);
  console.log(`floor: containerd CRI calls    ${f(cri.p50)}  ${f(cri.p99)}  ${f(cri.mean)}`);
  console.log(`floor: CRI + CNI plugins       ${f(criCni.p50)}  ${f(criCni.p99)}  ${f(criCni.mean)}`);
  console.log(
    `  of which the essential calls ${f(essential.p50)}  ${f(essential.p99)}  ${f(essential.mean)}   (RunPodSandbox, PodSandboxStatus, CreateContainer, StartContainer, CNI ADD)`,
  );
  console.log(`Skiff over the CRI floor: ${((total.p50 / cri.p50 - 1) * 100).toFixed(0)}% at p50 (+${(total.p50 - cri.p50).toFixed(1)} ms)`);
  console.log(`Skiff over CRI + CNI:     ${((total.p50 / criCni.p50 - 1) * 100).toFixed(0)}% at p50 (+${(total.p50 - criCni.p50).toFixed(1)} ms)`);
  console.log(`Skiff over the essential calls: ${((total.p50 / essential.p50 - 1) * 100).toFixed(0)}% at p50 (+${(total.p50 - essential.p50).toFixed(1)} ms)`);
  console.log(`(${unattributed.calls} calls not tied to one pod, ${unattributed.ms.toFixed(0)} ms in all: the kubelet's relists and image checks)`);
} finally {
  await kernel.stop();
  rmSync(dir, { recursive: true, force: true });
}
