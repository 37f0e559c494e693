#!/usr/bin/env node
// Scheduling throughput end to end: the API server (LMDB store, in-process) and the scheduler with the default
// plugins, N Ready nodes as API objects (no kubelets, as upstream's scheduler_perf does), P pending pods.
// Two scenarios per size:
//   - backlog: the pods exist before the scheduler starts; pods/s from its first bind to its last;
//   - stream:  32 in-process clients create the pods while the scheduler runs; created/s and bound/s.
// Three ways, in the same run, each in a fresh process (RSS is the whole process, worker thread included):
//   - worker:   the scheduler in its own thread, sampling nodes as upstream (percentageOfNodesToScore adaptive);
//   - main:     the same on the API server's event loop (thread: main);
//   - baseline: the earlier path — on the event loop and scoring every node (percentageOfNodesToScore: 100).
// BENCH_SIZES (default "100,1000,5000"), BENCH_PODS (default 5000), BENCH_MODES (default "worker,main,baseline").
// Needs `npm run build` first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The scheduler plugins the dev preset loads (upstream's default set, one package each).
const { default: devPreset } = await import('@skiff/preset-dev');
const SCHEDULER_PACKAGES = devPreset.plugins.filter((name) => typeof name === 'string' && name.startsWith('@skiff/plugin-scheduler-'));

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** BENCH_CPU_PROFILE=file: a CPU profile of the main thread while pods are scheduled (not the setup); with BENCH_HEAP_PROFILE=file, a sampled allocation profile instead. */
async function startProfile() {
  const { Session } = await import('node:inspector');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  const heap = process.env.BENCH_HEAP_PROFILE;
  if (heap)
    await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  else {
    await post('Profiler.enable');
    await post('Profiler.start');
  }
  return {
    async stop(file) {
      const { profile } = await post(heap ? 'HeapProfiler.stopSampling' : 'Profiler.stop');
      writeFileSync(heap ? heap : file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

async function child(nodes, pods, mode, scenario) {
  const { startBenchApiServer } = await import('./bench-cluster.mjs');
  const { default: scheduler } = await import('@skiff/scheduler');
  const { default: allowAll } = await import('@skiff/plugin-authz-always-allow');
  const plugins = [];
  const loaded = [];
  for (const name of SCHEDULER_PACKAGES) {
    try {
      plugins.push((await import(name)).default);
      loaded.push(name.replace('@skiff/plugin-scheduler-', ''));
    } catch (err) {
      throw new Error(`${name} is not built (npm run build): ${err.message}`);
    }
  }
  // NodeResourcesFit scores now; the older least-allocated score only when NodeResourcesFit has no score.
  const schedulerOptions = mode === 'worker' ? { thread: 'worker' } : mode === 'main' ? { thread: 'main' } : { thread: 'main', percentageOfNodesToScore: 100 };
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-sched-'));
  const json = { 'content-type': 'application/json' };
  const node = (i) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: `node-${i}`, labels: { 'kubernetes.io/hostname': `node-${i}`, 'topology.kubernetes.io/zone': `zone-${i % 3}` } },
    status: {
      capacity: { cpu: '32', memory: '128Gi', pods: '110' },
      allocatable: { cpu: '32', memory: '128Gi', pods: '110' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() },
      ],
    },
  });
  const pod = (i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: 'default', labels: { app: `app-${i % 10}` } },
    spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  });
  const createAll = async (call, path, count, make, concurrency = 32) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          const i = next++;
          const response = await call('POST', path, make(i), json);
          if (response.status >= 300) throw new Error(`create ${path}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
        }
      }),
    );
  };
  try {
    // Phase 1: nodes (and for the backlog, the pods) without a scheduler.
    const setup = await startBenchApiServer({ plugins: [allowAll], dataDir });
    await createAll(setup.call, '/api/v1/nodes', nodes, node);
    if (scenario === 'backlog') await createAll(setup.call, '/api/v1/namespaces/default/pods', pods, pod);
    await setup.stop();

    // Phase 2: the scheduler.
    const server = await startBenchApiServer({ plugins: [allowAll, [scheduler, schedulerOptions], ...plugins], dataDir });
    const profiler = process.env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
    const started = performance.now();
    let bound = 0;
    let first = 0;
    let last = 0;
    // Pods bound before the watch begins (the scheduler starts with the server) are counted from a list.
    const listed = await server.call('GET', '/api/v1/pods');
    const response = await server.handler.handle({
      method: 'GET',
      path: '/api/v1/pods',
      query: { watch: 'true', resourceVersion: listed.body.metadata.resourceVersion },
      headers: { authorization: `Bearer ${server.token}` },
    });
    const seen = new Set();
    for (const item of listed.body.items) {
      if (item.spec.nodeName) {
        seen.add(item.metadata.name);
        bound++;
      }
    }
    const done = (async () => {
      for await (const event of response.stream) {
        const object = event.object;
        if (object?.spec?.nodeName && !seen.has(object.metadata.name)) {
          seen.add(object.metadata.name);
          const now = performance.now();
          if (bound++ === 0) first = now;
          last = now;
          if (bound >= pods) return;
        }
      }
    })();
    let created = 0;
    let createMs = 0;
    if (scenario === 'stream') {
      const t0 = performance.now();
      await createAll(server.call, '/api/v1/namespaces/default/pods', pods, pod);
      createMs = performance.now() - t0;
      created = pods;
    }
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${bound}/${pods} bound after 300 s`)), 300_000).unref());
    await Promise.race([done, timeout]);
    const rss = process.memoryUsage().rss;
    if (profiler) await profiler.stop(process.env.BENCH_CPU_PROFILE);
    await server.stop();
    // From the moment the scheduler is running (start resolved: informers synced) to the last bind.
    const span = last - started;
    void first;
    process.stdout.write(
      JSON.stringify({
        nodes,
        pods,
        mode,
        scenario,
        podsPerSecond: bound / (span / 1000),
        createdPerSecond: created ? created / (createMs / 1000) : undefined,
        rssMiB: rss / 2 ** 20,
        loaded,
      }) + '\n',
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  const [nodes, pods, mode, scenario] = process.argv.slice(3);
  await child(Number(nodes), Number(pods), mode, scenario);
  process.exit(0);
}

const sizes = (process.env.BENCH_SIZES ?? '100,1000,5000').split(',').map(Number);
const podCount = Number(process.env.BENCH_PODS ?? 5000);
const modes = (process.env.BENCH_MODES ?? 'worker,main,baseline').split(',');
const scenarios = (process.env.BENCH_SCENARIOS ?? 'backlog,stream').split(',');
const self = fileURLToPath(import.meta.url);
let printedPlugins = false;
for (const nodes of sizes) {
  console.log(`${fmt(nodes)} nodes, ${fmt(podCount)} pods`);
  for (const scenario of scenarios) {
    for (const mode of modes) {
      const run = spawnSync(process.execPath, ['--max-old-space-size=4096', self, '--child', String(nodes), String(podCount), mode, scenario], {
        encoding: 'utf8',
      });
      const line = run.stdout.trim().split('\n').pop();
      if (run.status !== 0 || !line?.startsWith('{')) {
        console.log(`  ${scenario} ${mode}: failed: ${(run.stderr || run.stdout).trim().split('\n').slice(-3).join(' | ')}`);
        continue;
      }
      const r = JSON.parse(line);
      if (!printedPlugins) {
        console.log(`  scheduler plugins: ${r.loaded.join(', ')}`);
        printedPlugins = true;
      }
      const created = r.createdPerSecond ? `, created ${fmt(r.createdPerSecond)}/s` : '';
      console.log(`  ${scenario.padEnd(7)} ${mode.padEnd(8)} ${fmt(r.podsPerSecond).padStart(6)} pods/s bound${created}, RSS ${fmt(r.rssMiB)} MiB`);
    }
  }
}
