import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { unreachableRoutes } from './routes.js';
import { buildTestImages, missingPrerequisites, pushTestImages, startRegistry, type TestRegistry } from '../scripts/test-images.mjs';

// A HorizontalPodAutoscaler on the dev preset, end to end: the simulated runtime burns what the pods'
// skiff.io/simulate-cpu annotation says, the kubelet samples it, @skiff/plugin-metrics-server serves it as
// metrics.k8s.io, and @skiff/plugin-controller-hpa scales the Deployment through /scale — up while its pods use
// twice their request against a 50 % target, back down once a new template makes them idle. Periods are short
// to keep the test short: HPA sync 2 s, kubelet housekeeping and metrics resolution 1 s, scale-down window 5 s.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('hpa');
const cacheDir = tempDir('hpa-cache');
const WAIT = { timeoutMs: 120_000, intervalMs: 500 };
let skiff: RunningSkiff;
const { ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

const CONFIG = `export default {
  plugins: [
    ['@skiff/plugin-controller-hpa', { syncPeriodSeconds: 2 }],
    ['@skiff/kubelet', { housekeepingSeconds: 1 }],
    ['@skiff/plugin-metrics-server', { metricResolutionSeconds: 1 }],
  ],
};
`;

/** The Deployment both parts scale: one container requesting 100m; the options add annotations, the image and command, and more requests and limits. */
const burner = (options: { annotations?: string; container: string; requests?: string; limits?: string }) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: burner
spec:
  replicas: 1
  selector:
    matchLabels: { app: burner }
  template:
    metadata:
      labels: { app: burner }
${options.annotations ? `      annotations: ${options.annotations}\n` : ''}    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
${options.container}
        resources:
          requests: { cpu: 100m${options.requests ?? ''} }
${options.limits ? `          limits: ${options.limits}\n` : ''}`;

const deployment = (cpu: string) => burner({ annotations: `{ skiff.io/simulate-cpu: "${cpu}" }`, container: '        image: busybox:1.36' });

const HPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: burner
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: burner }
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: { name: cpu, target: { type: Utilization, averageUtilization: 50 } }
  behavior:
    scaleDown: { stabilizationWindowSeconds: 5 }
`;

beforeAll(async () => {
  writeFileSync(join(project, 'skiff.config.mjs'), CONFIG);
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const replicas = async () => (await json('get', 'deployment', 'burner')).spec.replicas as number;
const rescales = async (): Promise<string[]> =>
  (await json('get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale')).items.map(
    (event: any) => `${event.source?.component}: ${event.message}`,
  );

describe('a HorizontalPodAutoscaler on simulated CPU usage (kubectl 1.36)', () => {
  it('scales a busy Deployment up to maxReplicas, and back down once it is idle', async () => {
    await apply(deployment('200m'));
    await ok('rollout', 'status', 'deployment/burner', '--timeout=60s');
    await apply(HPA);

    // 200m of a 100m request is 200 % against 50 %: 4 replicas asked for, 3 allowed.
    await waitFor('the scale-up to 3', async () => (await replicas()) === 3, WAIT);
    const busy = await waitFor(
      'the autoscaler to report the usage',
      async () => {
        const hpa = await json('get', 'hpa', 'burner');
        return hpa.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization >= 150 && hpa;
      },
      WAIT,
    );
    expect(busy.status.currentMetrics[0].resource.name).toBe('cpu');
    expect(busy.status.conditions.find((c: any) => c.type === 'ScalingActive')).toMatchObject({ status: 'True', reason: 'ValidMetricFound' });
    expect(await rescales()).toContain('horizontal-pod-autoscaler: New size: 3; reason: cpu resource utilization (percentage of request) above target');
    const table = (await ok('get', 'hpa', 'burner')).split('\n');
    expect(table[0]).toMatch(/^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/);
    expect(table[1]).toMatch(/^burner\s+Deployment\/burner\s+cpu: \d+%\/50%\s+1\s+3\s+\d\s+\S+$/);

    // A new template idles the pods: 20m of 100m is 20 % → fewer replicas, once the 5 s window has passed. A patch,
    // not an apply of the manifest, which would set replicas back to 1 itself.
    await ok('patch', 'deployment', 'burner', '--type=merge', '-p', '{"spec":{"template":{"metadata":{"annotations":{"skiff.io/simulate-cpu":"20m"}}}}}');
    await waitFor('the scale-down to 1', async () => (await replicas()) === 1, WAIT);
    expect((await rescales()).some((line) => line.endsWith('reason: All metrics below target'))).toBe(true);
    const idle = await json('get', 'hpa', 'burner');
    expect(idle.status.lastScaleTime).toBeDefined();
    const describe = await ok('describe', 'hpa', 'burner');
    expect(describe).toMatch(/AbleToScale\s+True/);
    expect(describe).toMatch(/SuccessfulRescale/);
  });
});

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('hpa.test.ts: the local preset part is skipped: real containers need root (the dev preset part runs)');

// The same on the local preset: real containers under containerd, their CPU read from cgroups through CRI's
// ListContainerStats. Each pod burns CPU for 30 s (limited to 200m, requesting 100m: 200 % against a 50 % target),
// then sleeps: the Deployment grows to 3 while they burn and shrinks back to 1 once they all sleep.
describe.skipIf(notRoot)('a HorizontalPodAutoscaler on real CPU usage (local preset, kubectl 1.36)', () => {
  const local = tempDir('hpa-local');
  let cluster: RunningSkiff;
  let registry: TestRegistry;
  let removeRoutes: (() => void) | undefined;
  const real = kubectlOn(kubectl136.path, () => cluster.kubeconfig, join(local, 'cache'));
  const realReplicas = async () => (await real.json('get', 'deployment', 'burner')).spec.replicas as number;

  beforeAll(async () => {
    removeRoutes = unreachableRoutes();
    const missing = missingPrerequisites({ registry: true });
    if (missing.length) throw new Error(`real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
    const images = await buildTestImages({ out: join(local, 'images') });
    registry = await startRegistry({ out: join(local, 'images') });
    await pushTestImages(images, registry.address);
    writeFileSync(join(local, 'skiff.config.mjs'), CONFIG.replace('export default {', "export default {\n  preset: 'local',"));
    cluster = await startSkiff(['--data-dir', join(local, 'data')], { cwd: local, timeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => {
    removeRoutes?.();
    await cluster?.stop();
    await registry?.stop();
    rmSync(local, { recursive: true, force: true });
  });

  it('scales a Deployment whose pods burn CPU up to 3, and back to 1 once they stop', async () => {
    await real.apply(
      burner({
        container: `        image: ${registry.address}/skiff/busybox:1\n        command: [sh, -c, "timeout 30 sh -c 'while :; do :; done'; exec sleep 3600"]`,
        requests: ', memory: 16Mi',
        limits: '{ cpu: 200m, memory: 64Mi }',
      }),
    );
    await real.ok('rollout', 'status', 'deployment/burner', '--timeout=60s');
    await real.apply(HPA);
    await waitFor('the scale-up to 3', async () => (await realReplicas()) === 3, WAIT);
    const events = await real.json('get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale');
    expect(events.items.map((event: any) => event.message)).toContain('New size: 3; reason: cpu resource utilization (percentage of request) above target');
    await waitFor('the scale-down to 1 once every pod sleeps', async () => (await realReplicas()) === 1, { timeoutMs: 150_000, intervalMs: 1000 });
    const hpa = await real.json('get', 'hpa', 'burner');
    expect(hpa.status.currentMetrics[0].resource.current.averageUtilization).toBeLessThan(50);
    await real.ok('delete', 'deployment', 'burner', '--wait=false');
  }, 240_000);
});
