import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBECTL_MINORS, kubectlOn, kubectlVersions, podRunning, waitForPod, type KubectlOn } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { unreachableRoutes } from './routes.js';
import { buildTestImages, missingPrerequisites, pushTestImages, startRegistry, type TestRegistry } from '../scripts/test-images.mjs';

// `kubectl top` on both presets. Dev: simulated containers whose pod annotations set their usage, read back by
// every kubectl from 1.27 to 1.36. Local (root only, as real-containers.test.ts): a busy loop in a real container limited
// to 200m reads between 100m and 250m. The kubelets read usage every second and the metrics API keeps a node's
// figures for one, so figures show within seconds instead of upstream's 10–15 s.

const TOP_CONFIG = (preset: string) => `export default {
  preset: '${preset}',
  plugins: [
    ['@skiff/kubelet', { housekeepingSeconds: 1 }],
    ['@skiff/plugin-metrics-server', { metricResolutionSeconds: 1 }],
  ],
};
`;

/** `kubectl top` columns as numbers: CPU in millicores, memory in MiB. */
function parseTop(stdout: string): string[][] {
  return stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/));
}
const millicores = (text: string) => Number(text.replace(/m$/, '')) * (text.endsWith('m') ? 1 : 1000);

// Every kubectl the matrix runs (1.27–1.36), each against the same cluster.
const WANTED: number[] = [...KUBECTL_MINORS];

describe('kubectl top on the dev preset', () => {
  const project = tempDir('top-dev');
  let skiff: RunningSkiff;
  const binaries = kubectlVersions().filter((binary) => WANTED.includes(binary.minor));
  const on = (minor: number): KubectlOn => kubectlOn(binaries.find((b) => b.minor === minor)!.path, () => skiff.kubeconfig, join(project, `cache-1.${minor}`));

  beforeAll(async () => {
    writeFileSync(join(project, 'skiff.config.mjs'), TOP_CONFIG('dev'));
    skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
    const { apply, json } = on(36);
    await apply(`apiVersion: v1
kind: Pod
metadata:
  name: burner
  annotations: { skiff.io/simulate-cpu: 250m, skiff.io/simulate-memory: 96Mi }
spec:
  containers:
  - { name: main, image: busybox }
  - { name: helper, image: busybox, resources: { limits: { cpu: 20m } } }
`);
    await waitForPod(json, 'burner', podRunning, 'its containers running');
  }, 60_000);
  afterAll(async () => {
    await skiff?.stop();
    rmSync(project, { recursive: true, force: true });
  });

  it.each(WANTED)('kubectl 1.%i top pod (and --containers) shows the simulated 250m, top node prints figures', async (minor) => {
    expect(binaries.map((b) => b.minor)).toContain(minor);
    const { ok, kubectl } = on(minor);
    const pods = await waitFor(
      `kubectl 1.${minor} top pod to show burner`,
      async () => {
        const result = await kubectl(['top', 'pod']);
        if (result.code !== 0 || !/^burner\s/m.test(result.stdout)) throw new Error(`it said: ${result.stdout}${result.stderr}`);
        return result.stdout;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(pods).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    const [[name, cpu, memory]] = parseTop(pods) as [string[]];
    expect(name).toBe('burner');
    expect(millicores(cpu!)).toBeGreaterThanOrEqual(268);
    expect(millicores(cpu!)).toBeLessThanOrEqual(272);
    expect(memory).toBe('192Mi');

    const containers = parseTop(await ok('top', 'pod', 'burner', '--containers'));
    const byName = containers.map(([pod, container, c, m]) => [pod, container, millicores(c!), m]).sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(byName).toEqual([
      ['burner', 'helper', 20, '96Mi'],
      ['burner', 'main', 250, '96Mi'],
    ]);

    const nodes = await ok('top', 'node');
    // kubectl 1.27 heads the percentages CPU% and MEMORY%, later versions CPU(%) and MEMORY(%).
    expect(nodes).toMatch(/^NAME\s+CPU\(cores\)\s+CPU\(?%\)?\s+MEMORY\(bytes\)\s+MEMORY\(?%\)?/);
    const [[node, nodeCpu, cpuPercent, nodeMemory, memoryPercent]] = parseTop(nodes) as [string[]];
    expect(node).toBe('node-1');
    // The simulated node's own 100m and 256Mi, and the pod.
    expect(millicores(nodeCpu!)).toBeGreaterThanOrEqual(365);
    expect(millicores(nodeCpu!)).toBeLessThanOrEqual(375);
    expect(cpuPercent).toMatch(/^\d+%$/);
    expect(nodeMemory).toBe('448Mi');
    expect(memoryPercent).toMatch(/^\d+%$/);

    const all = await ok('top', 'pod', '-A', '--sort-by', 'cpu');
    expect(all).toMatch(/^default\s+burner\s+\d+m\s+192Mi/m);
  });
});

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('top.test.ts: the local preset part is skipped: real containers need root (the dev preset part runs)');

describe.skipIf(notRoot)('kubectl top on the local preset (real containers)', () => {
  const project = tempDir('top-local');
  let skiff: RunningSkiff;
  let registry: TestRegistry;
  let removeRoutes: (() => void) | undefined;
  const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
  const { apply, json, kubectl, ok } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, join(project, 'cache'));

  beforeAll(async () => {
    removeRoutes = unreachableRoutes();
    const missing = missingPrerequisites({ registry: true });
    if (missing.length) throw new Error(`real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
    const images = await buildTestImages({ out: join(project, 'images') });
    registry = await startRegistry({ out: join(project, 'images') });
    await pushTestImages(images, registry.address);
    writeFileSync(join(project, 'skiff.config.mjs'), TOP_CONFIG('local'));
    skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project, timeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => {
    removeRoutes?.();
    await skiff?.stop();
    await registry?.stop();
    rmSync(project, { recursive: true, force: true });
  });

  it('a busy loop limited to 200m reads between 100m and 250m; the node shows figures', async () => {
    await apply(`apiVersion: v1
kind: Pod
metadata: { name: spin }
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: spin
    image: ${registry.address}/skiff/busybox:1
    command: [sh, -c, 'while :; do :; done']
    resources: { limits: { cpu: 200m, memory: 64Mi } }
`);
    await waitForPod(json, 'spin', podRunning, 'its busy loop running');
    // Two readings after the start, and one more so the window lies wholly in the loop.
    const line = await waitFor(
      'kubectl top pod spin',
      async () => {
        const result = await kubectl(['top', 'pod', 'spin']);
        const row = parseTop(result.stdout)[0];
        if (result.code !== 0 || !row || millicores(row[1]!) < 100) throw new Error(`it said: ${result.stdout}${result.stderr}`);
        return row;
      },
      { timeoutMs: 20_000, intervalMs: 1000 },
    );
    expect(millicores(line[1]!)).toBeLessThanOrEqual(250);
    expect(line[2]).toMatch(/^\d+Mi$/);
    const [node] = parseTop(await ok('top', 'node'));
    expect(node![0]).toBe('node-1');
    expect(millicores(node![1]!)).toBeGreaterThanOrEqual(100);
    expect(node![3]).toMatch(/^\d+Mi$/);
    await ok('delete', 'pod', 'spin', '--wait=false');
  }, 60_000);
});
