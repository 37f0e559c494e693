// GET /metrics on a standard-preset cluster after a small workload driven by the real kubectl, read with a real
// Prometheus text-format parser (Debian's python3-prometheus-client): kube-apiserver's request and storage metrics,
// the store timings, the controllers' work queues, the scheduler's attempts and queue, the kubelets' runtime operations
// and running pods, and RBAC's system:monitoring access.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram } from './clients.js';
import { CLUSTER_TIMEOUT, Kubectl, SKIFF_BIN, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  /** null for NaN (JSON has no NaN). */
  value: number;
}
interface Family {
  name: string;
  type: string;
  samples: Sample[];
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    samples = [{"name": s.name, "labels": s.labels, "value": None if math.isnan(s.value) else s.value} for s in family.samples]
    out.append({"name": family.name, "type": family.type, "samples": samples})
print(json.dumps(out, allow_nan=False))
`;

async function parse(text: string): Promise<Map<string, Family>> {
  const result = await runProgram('/usr/bin/python3', ['-c', PARSE], { input: text, timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`prometheus_client could not parse /metrics: ${result.stderr}`);
  return new Map((JSON.parse(result.stdout) as Family[]).map((family) => [family.name, family]));
}

function samples(families: Map<string, Family>, family: string, sample: string, labels: Record<string, string> = {}): Sample[] {
  const found = families.get(family);
  if (!found) throw new Error(`no metric family ${family}`);
  return found.samples.filter((s) => s.name === sample && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
}
const sum = (list: Sample[]) => list.reduce((total, s) => total + s.value, 0);

const dir = tempDir('skiff-metrics');
const dataDir = join(dir, 'data');
let skiff: RunningSkiff;
let admin: Kubectl;

async function userKubeconfig(name: string, ...groups: string[]): Promise<Kubectl> {
  const args = ['kubeconfig', 'user', '--name', name, '--data-dir', dataDir, ...groups.flatMap((group) => ['--group', group])];
  const result = await runProgram(SKIFF_BIN, args, { timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`skiff ${args.join(' ')}: ${result.stderr}`);
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(file, result.stdout, { mode: 0o600 });
  return new Kubectl(file);
}

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  skiff = await startSkiff(['--preset', 'standard', '--data-dir', dataDir], { cwd: dir, timeoutMs: 60_000 });
  admin = new Kubectl(skiff.kubeconfig);
}, 90_000);
afterAll(async () => {
  await skiff?.stop();
  admin?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /metrics', () => {
  it('after a workload, holds the API server, store and work-queue metrics with their labels and sensible values', async () => {
    await admin.ok('create', 'namespace', 'shop');
    for (const name of ['a', 'b', 'c']) await admin.ok('-n', 'shop', 'create', 'configmap', name, '--from-literal=k=v');
    await admin.ok('-n', 'shop', 'get', 'configmaps');
    await admin.ok('-n', 'shop', 'get', 'configmap', 'a');
    await admin.ok('-n', 'shop', 'create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2');
    await waitFor(
      'deployment web available',
      async () => (await admin.json('-n', 'shop', 'get', 'deployment', 'web')).status?.availableReplicas === 2,
      CLUSTER_TIMEOUT,
    );

    const families = await parse(await admin.ok('get', '--raw', '/metrics'));
    const notANumber = [...families.values()].flatMap((family) => family.samples.filter((s) => s.value === null).map((s) => s.name));
    expect(notANumber).toEqual([]);

    const created = samples(families, 'apiserver_request', 'apiserver_request_total', { verb: 'POST', resource: 'configmaps', scope: 'resource', code: '201' });
    expect(created).toHaveLength(1);
    expect(created[0]!.labels).toEqual({
      verb: 'POST',
      dry_run: '',
      group: '',
      version: 'v1',
      resource: 'configmaps',
      subresource: '',
      scope: 'resource',
      component: 'apiserver',
      code: '201',
    });
    expect(created[0]!.value).toBeGreaterThanOrEqual(3);
    expect(
      sum(samples(families, 'apiserver_request', 'apiserver_request_total', { verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200' })),
    ).toBeGreaterThan(0);
    expect(
      sum(samples(families, 'apiserver_request', 'apiserver_request_total', { verb: 'GET', resource: 'configmaps', scope: 'resource', code: '200' })),
    ).toBeGreaterThan(0);
    expect(sum(samples(families, 'apiserver_request', 'apiserver_request_total', { verb: 'POST', group: 'apps', resource: 'deployments' }))).toBe(1);

    expect(families.get('apiserver_request_duration_seconds')?.type).toBe('histogram');
    const durations = samples(families, 'apiserver_request_duration_seconds', 'apiserver_request_duration_seconds_count', {
      verb: 'POST',
      resource: 'configmaps',
    });
    expect(sum(durations)).toBeGreaterThanOrEqual(3);
    const infBucket = samples(families, 'apiserver_request_duration_seconds', 'apiserver_request_duration_seconds_bucket', {
      verb: 'POST',
      resource: 'configmaps',
      le: '+Inf',
    });
    expect(sum(infBucket)).toBe(sum(durations));
    expect(durations[0]!.labels).not.toHaveProperty('code');

    const inflight = families.get('apiserver_current_inflight_requests')!;
    expect(inflight.samples.map((s) => s.labels.request_kind).sort()).toEqual(['mutating', 'readOnly']);

    expect(samples(families, 'apiserver_storage_objects', 'apiserver_storage_objects', { resource: 'configmaps' })[0]!.value).toBeGreaterThanOrEqual(3);
    const configmaps = await admin.json('get', 'configmaps', '-A');
    expect(samples(families, 'apiserver_storage_objects', 'apiserver_storage_objects', { resource: 'configmaps' })[0]!.value).toBe(configmaps.items.length);
    expect(samples(families, 'apiserver_storage_objects', 'apiserver_storage_objects', { resource: 'deployments.apps' })[0]!.value).toBe(1);

    expect(
      sum(samples(families, 'etcd_request_duration_seconds', 'etcd_request_duration_seconds_count', { operation: 'create', type: '/registry/configmaps/' })),
    ).toBeGreaterThanOrEqual(3);
    expect(sum(samples(families, 'etcd_request_duration_seconds', 'etcd_request_duration_seconds_count', { operation: 'listWithCount' }))).toBeGreaterThan(0);
    expect(
      sum(samples(families, 'etcd_request_duration_seconds', 'etcd_request_duration_seconds_count', { type: '/registry/apps/deployments/' })),
    ).toBeGreaterThan(0);

    expect(sum(samples(families, 'workqueue_adds', 'workqueue_adds_total', { name: 'deployment' }))).toBeGreaterThan(0);
    expect(sum(samples(families, 'workqueue_adds', 'workqueue_adds_total', { name: 'replicaset' }))).toBeGreaterThan(0);
    expect(sum(samples(families, 'workqueue_work_duration_seconds', 'workqueue_work_duration_seconds_count', { name: 'deployment' }))).toBeGreaterThan(0);
    expect(samples(families, 'workqueue_depth', 'workqueue_depth', { name: 'deployment' })).toHaveLength(1);
    for (const family of [
      'workqueue_queue_duration_seconds',
      'workqueue_retries',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ])
      expect(families.has(family), family).toBe(true);

    // The scheduler (in its worker thread on this preset) and the kubelets report through the same scrape.
    const bound = (await admin.json('get', 'pods', '-A')).items.filter((pod: { spec: { nodeName?: string } }) => pod.spec.nodeName);
    expect(sum(samples(families, 'scheduler_schedule_attempts', 'scheduler_schedule_attempts_total', { result: 'scheduled' }))).toBeGreaterThanOrEqual(
      bound.length,
    );
    expect(samples(families, 'scheduler_schedule_attempts', 'scheduler_schedule_attempts_total', { result: 'scheduled' })[0]!.labels.profile).toBe(
      'default-scheduler',
    );
    expect(
      sum(samples(families, 'scheduler_scheduling_attempt_duration_seconds', 'scheduler_scheduling_attempt_duration_seconds_count', { result: 'scheduled' })),
    ).toBeGreaterThanOrEqual(bound.length);
    expect(
      families
        .get('scheduler_pending_pods')!
        .samples.map((s) => s.labels.queue)
        .sort(),
    ).toEqual(['active', 'backoff', 'gated', 'unschedulable']);
    expect(
      sum(samples(families, 'scheduler_pod_scheduling_sli_duration_seconds', 'scheduler_pod_scheduling_sli_duration_seconds_count')),
    ).toBeGreaterThanOrEqual(bound.length);
    expect(
      sum(samples(families, 'kubelet_runtime_operations', 'kubelet_runtime_operations_total', { operation_type: 'start_container' })),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sum(samples(families, 'kubelet_runtime_operations', 'kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' })),
    ).toBeGreaterThanOrEqual(2);
    expect(families.get('kubelet_runtime_operations_duration_seconds')?.type).toBe('histogram');
    expect(families.has('kubelet_runtime_operations_errors')).toBe(true);
    expect(sum(samples(families, 'kubelet_pod_start_duration_seconds', 'kubelet_pod_start_duration_seconds_count'))).toBeGreaterThanOrEqual(2);
    expect(samples(families, 'kubelet_running_containers', 'kubelet_running_containers', { container_state: 'running' })[0]!.value).toBeGreaterThanOrEqual(2);

    expect(samples(families, 'skiff_apiserver_thread_requests', 'skiff_apiserver_thread_requests_total', { thread: '0' })[0]!.value).toBeGreaterThan(0);
    expect(samples(families, 'process_cpu_user_seconds', 'process_cpu_user_seconds_total')[0]!.value).toBeGreaterThan(0);
    expect(families.has('nodejs_heap_size_used_bytes')).toBe(true);
  }, 120_000);

  it('counts as kubelet_running_pods the pods running on the nodes, summed over the kubelets of the process', async () => {
    // A pod may be starting or stopping between the scrape and the list: compare until both agree.
    await waitFor(
      'kubelet_running_pods to equal the running pods',
      async () => {
        const families = await parse(await admin.ok('get', '--raw', '/metrics'));
        const gauge = samples(families, 'kubelet_running_pods', 'kubelet_running_pods');
        const running = (await admin.json('get', 'pods', '-A', '--field-selector=status.phase=Running')).items.length;
        return gauge.length === 1 && running >= 2 && gauge[0]!.value === running;
      },
      CLUSTER_TIMEOUT,
    );
  }, 120_000);

  it('answers in the Prometheus text format 0.0.4 to a user in system:monitoring, and 403 to one without it', async () => {
    const monitoring = await userKubeconfig('prom', 'system:monitoring');
    const other = await userKubeconfig('someone', 'developers');
    try {
      const allowed = await monitoring.run(['get', '--raw', '/metrics', '-v=8']);
      expect(allowed.code).toBe(0);
      expect(allowed.stderr).toMatch(/Response Status: 200/);
      expect(allowed.stderr).toMatch(/Content-Type: text\/plain; version=0\.0\.4; charset=utf-8/i);
      expect((await parse(allowed.stdout)).has('apiserver_request')).toBe(true);
      const refused = await other.run(['get', '--raw', '/metrics']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/forbidden/i);
      const families = await parse(await admin.ok('get', '--raw', '/metrics'));
      expect(
        sum(samples(families, 'apiserver_request', 'apiserver_request_total', { verb: 'GET', subresource: '/metrics', code: '403' })),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      monitoring.cleanup();
      other.cleanup();
    }
  }, 60_000);
});
