import { afterAll, beforeAll, describe, test } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlVersions, runProgram } from './clients.js';
import { REPO_ROOT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { Slots } from './slots.js';

// The everyday kubectl commands, run by every kubectl from 1.27 to 1.36 against one `skiff up` with a node:
// create of the kinds users create first, apply (client- and server-side), get in every output, watch, describe,
// explain, scale, rollout status, wait, patch of every type, delete --wait, auth can-i and api-resources.
// Each version works in a namespace of its own (and cluster-scoped names of its own), so versions do not meet:
// VERSIONS_AT_ONCE of them run side by side, each one's steps in order (a failure names its version).

const versions = kubectlVersions();
let skiff: RunningSkiff;
const dataDir = tempDir('acceptance');
const cacheRoot = tempDir('acceptance-cache');

/** How many versions run at once (on two cores, 3 took ~105 s where 1 at a time took ~130 s). */
const VERSIONS_AT_ONCE = 3;
/** A version takes a slot before its first step and gives it back after its last. */
const slots = new Slots(VERSIONS_AT_ONCE);

/** The resources upstream 1.36 serves by default, as the repository writes them down. */
function upstreamResources(): { name: string; shortNames: string; apiVersion: string; namespaced: string; kind: string }[] {
  const text = readFileSync(join(REPO_ROOT, 'core/api/src/generated/api-resources-1.36.txt'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [name, shortNames, apiVersion, namespaced, kind] = line.split(' | ').map((cell) => cell.trim());
      return { name: name!, shortNames: shortNames === '-' ? '' : shortNames!, apiVersion: apiVersion!, namespaced: namespaced!, kind: kind! };
    });
}

/** What the dev preset serves beyond upstream's defaults: metrics.k8s.io, as a cluster with metrics-server lists it. */
const METRICS_RESOURCES = [
  { name: 'nodes', shortNames: '', apiVersion: 'metrics.k8s.io/v1beta1', namespaced: 'false', kind: 'NodeMetrics' },
  { name: 'pods', shortNames: '', apiVersion: 'metrics.k8s.io/v1beta1', namespaced: 'true', kind: 'PodMetrics' },
];

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '1']);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cacheRoot, { recursive: true, force: true });
});

// The version suites are concurrent (bounded by the slots); the steps inside one are sequential, each building on the last.
describe.each(versions)('kubectl 1.$minor', { concurrent: true }, ({ minor, path }) => {
  const it = test.sequential;
  // A version waits here for a slot, possibly while others run all their steps.
  beforeAll(() => slots.take(), 600_000);
  afterAll(() => slots.give());
  const cacheDir = join(cacheRoot, `1.${minor}`);
  const ns = `acc-1-${minor}`;
  const kubectl = (args: string[], options?: { timeoutMs?: number; input?: string }) =>
    runProgram(path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, ...args], options);
  /** Runs in the version's namespace and expects success; returns stdout. */
  const ok = async (...args: string[]): Promise<string> => {
    const result = await kubectl(['-n', ns, ...args]);
    if (result.code !== 0) throw new Error(`kubectl 1.${minor} ${args.join(' ')} exited ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
    return result.stdout;
  };
  const withInput = async (input: string, ...args: string[]): Promise<string> => {
    const result = await kubectl(['-n', ns, ...args], { input });
    if (result.code !== 0) throw new Error(`kubectl 1.${minor} ${args.join(' ')} exited ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
    return result.stdout;
  };

  it('creates the kinds users create first, each read back', async ({ expect }) => {
    expect((await kubectl(['create', 'namespace', ns])).stdout.trim()).toBe(`namespace/${ns} created`);
    const created = [
      await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2', '--port=80'),
      await ok('create', 'configmap', 'settings', '--from-literal=mode=fast', '--from-literal=level=3'),
      await ok('create', 'secret', 'generic', 'creds', '--from-literal=password=s3cret'),
      await ok('create', 'service', 'clusterip', 'web', '--tcp=80:8080'),
      await ok('create', 'serviceaccount', 'robot'),
      await ok('create', 'job', 'once', '--image=busybox:1.36'),
      await ok('create', 'cronjob', 'nightly', '--image=busybox:1.36', '--schedule=0 3 * * *'),
      await ok('create', 'role', 'reader', '--verb=get,list', '--resource=pods'),
      await ok('create', 'rolebinding', 'reader-bob', '--role=reader', '--user=bob'),
      await ok('create', 'clusterrole', `viewer-${minor}`, '--verb=get', '--resource=nodes'),
      await ok('create', 'pdb', 'web', '--selector=app=web', '--min-available=1'),
      await ok('create', 'ingress', 'web', '--rule=web.example.com/=web:80'),
      await ok('create', 'priorityclass', `high-${minor}`, '--value=1000'),
      await ok('create', 'quota', 'small', '--hard=pods=50,configmaps=50'),
    ].map((line) => line.trim());
    expect(created).toEqual([
      'deployment.apps/web created',
      'configmap/settings created',
      'secret/creds created',
      'service/web created',
      'serviceaccount/robot created',
      'job.batch/once created',
      'cronjob.batch/nightly created',
      'role.rbac.authorization.k8s.io/reader created',
      'rolebinding.rbac.authorization.k8s.io/reader-bob created',
      `clusterrole.rbac.authorization.k8s.io/viewer-${minor} created`,
      'poddisruptionbudget.policy/web created',
      'ingress.networking.k8s.io/web created',
      `priorityclass.scheduling.k8s.io/high-${minor} created`,
      'resourcequota/small created',
    ]);
    const secret = JSON.parse(await ok('get', 'secret', 'creds', '-o', 'json'));
    expect(Buffer.from(secret.data.password, 'base64').toString()).toBe('s3cret');
    expect(secret.type).toBe('Opaque');
    const service = JSON.parse(await ok('get', 'service', 'web', '-o', 'json'));
    expect(service.spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }],
      selector: { app: 'web' },
    });
    const job = JSON.parse(await ok('get', 'job', 'once', '-o', 'json'));
    expect(job.spec).toMatchObject({ backoffLimit: 6, completions: 1, parallelism: 1 });
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    const binding = JSON.parse(await ok('get', 'rolebinding', 'reader-bob', '-o', 'json'));
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' });
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }]);
  });

  it('creates from a file of several documents, and refuses a malformed one naming the field', async ({ expect }) => {
    const manifest = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: from-file}',
      'data: {a: "1"}',
      '---',
      'apiVersion: apps/v1',
      'kind: StatefulSet',
      'metadata: {name: db}',
      'spec:',
      '  serviceName: db',
      '  replicas: 1',
      '  selector: {matchLabels: {app: db}}',
      '  template:',
      '    metadata: {labels: {app: db}}',
      '    spec: {containers: [{name: db, image: postgres:16}]}',
    ].join('\n');
    const file = join(cacheRoot, `manifest-1-${minor}.yaml`);
    writeFileSync(file, manifest);
    expect((await ok('create', '-f', file)).trim().split('\n')).toEqual(['configmap/from-file created', 'statefulset.apps/db created']);
    const bad = await kubectl(['-n', ns, 'create', '-f', '-'], {
      input: 'apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: "eighty"}]}\n',
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/port/);
  });

  it('applies client-side (created, unchanged, configured) and server-side', async ({ expect }) => {
    const manifest = (image: string) =>
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: applied, labels: {tier: front}}',
        'spec:',
        '  replicas: 1',
        '  selector: {matchLabels: {app: applied}}',
        '  template:',
        '    metadata: {labels: {app: applied}}',
        `    spec: {containers: [{name: app, image: "${image}", ports: [{containerPort: 80}]}]}`,
      ].join('\n');
    expect((await withInput(manifest('nginx:1.26'), 'apply', '-f', '-')).trim()).toBe('deployment.apps/applied created');
    expect((await withInput(manifest('nginx:1.26'), 'apply', '-f', '-')).trim()).toBe('deployment.apps/applied unchanged');
    expect((await withInput(manifest('nginx:1.27'), 'apply', '-f', '-')).trim()).toBe('deployment.apps/applied configured');
    expect((await withInput(manifest('nginx:1.28'), 'apply', '--server-side', '-f', '-')).trim()).toBe('deployment.apps/applied serverside-applied');
    expect((await ok('get', 'deployment', 'applied', '-o', 'jsonpath={.spec.template.spec.containers[0].image}')).trim()).toBe('nginx:1.28');
  });

  it('reports a server-side apply conflict with another manager, and resolves it with --force-conflicts', async ({ expect }) => {
    const manifest = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: owned}', 'data: {color: blue, size: small}'].join('\n');
    expect((await withInput(manifest, 'apply', '--server-side', '-f', '-')).trim()).toBe('configmap/owned serverside-applied');
    await ok('patch', 'configmap', 'owned', '--type=merge', '-p', '{"data":{"color":"red"}}', '--field-manager=painter');
    const conflict = await kubectl(['-n', ns, 'apply', '--server-side', '-f', '-'], { input: manifest });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/Apply failed with 1 conflict: conflict with "painter"( using v1)?: \.data\.color/);
    expect((await withInput(manifest, 'apply', '--server-side', '--force-conflicts', '-f', '-')).trim()).toBe('configmap/owned serverside-applied');
    const owned = JSON.parse(await ok('get', 'configmap', 'owned', '-o', 'json', '--show-managed-fields'));
    expect(owned.data).toEqual({ color: 'blue', size: 'small' });
    const managers = owned.metadata.managedFields.map((entry: { manager: string; operation: string }) => `${entry.manager}/${entry.operation}`);
    expect(managers).toContain('kubectl/Apply');
    // The painter lost .data.color and holds nothing else, so its entry is gone.
    expect(managers).not.toContain('painter/Update');
  });

  it('gets in every output: table, wide, yaml, json, name, jsonpath; across namespaces and by label', async ({ expect }) => {
    expect(await ok('get', 'configmaps')).toMatch(/^NAME\s+DATA\s+AGE\n(.*\n)*settings\s+2\s+/m);
    expect(await ok('get', 'deployment', 'web', '-o', 'wide')).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\nweb\s+/);
    expect(await ok('get', 'configmap', 'settings', '-o', 'yaml')).toMatch(/^ {2}mode: fast$/m);
    expect(JSON.parse(await ok('get', 'service', 'web', '-o', 'json')).kind).toBe('Service');
    expect((await ok('get', 'secret,serviceaccount', '-o', 'name')).trim().split('\n')).toEqual(
      expect.arrayContaining(['secret/creds', 'serviceaccount/robot']),
    );
    expect((await ok('get', 'configmap', 'settings', '-o', 'jsonpath={.data.level}')).trim()).toBe('3');
    expect(await ok('get', 'roles,rolebindings')).toMatch(/role\.rbac\.authorization\.k8s\.io\/reader\s/);
    expect(await ok('get', 'cronjobs')).toMatch(
      /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nnightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>\s+/m,
    );
    const all = await kubectl(['get', 'deployments', '-A']);
    expect(all.stdout).toMatch(new RegExp(`^${ns}\\s+web\\s+`, 'm'));
    expect((await ok('get', 'pods', '-l', 'app=web', '-o', 'name')).trim().split('\n').length).toBeGreaterThanOrEqual(1);
  });

  it('watches a collection and sees a new object arrive', async ({ expect }) => {
    const watch = spawn(path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, '-n', ns, 'get', 'configmaps', '-w', '--output-watch-events'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    watch.stdout.on('data', (d: Buffer) => (out += d.toString()));
    watch.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const printed = () => `stdout:\n${out}\nstderr:\n${err}`;
    try {
      // The list comes first, as ADDED events; the watch then goes on from the list's resourceVersion, so an
      // object created after the list is out reaches kubectl only through the watch.
      await waitFor(
        `kubectl 1.${minor} get -w to list the configmaps there`,
        () => {
          if (watch.exitCode !== null) throw new Error(`it exited with ${watch.exitCode}\n${printed()}`);
          return /^ADDED\s+settings\s/m.test(out);
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      expect(out).not.toMatch(/watched/);
      await ok('create', 'configmap', 'watched', '--from-literal=x=y');
      await waitFor(
        `kubectl 1.${minor} get -w to print the new configmap`,
        () => {
          if (/ADDED\s+watched\s+1\s/.test(out)) return true;
          throw new Error(`it printed so far:\n${printed()}`);
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
    } finally {
      watch.kill('SIGKILL');
    }
    expect(out).toMatch(/ADDED\s+watched\s+1\s/);
  });

  it('describes and explains', async ({ expect }) => {
    expect(await ok('describe', 'configmap', 'settings')).toMatch(/^Name:\s+settings\nNamespace:\s+acc-1-\d+\n/);
    expect(await ok('describe', 'deployment', 'web')).toMatch(/^Replicas:\s+2 desired/m);
    const explained = await ok('explain', 'pods.spec.containers');
    expect(explained).toMatch(/^KIND:\s+Pod/m);
    expect(explained).toMatch(/^\s+image\s+<string>/m);
    // IntOrString is a named string component, as upstream publishes it; kubectl prints its type.
    expect(await ok('explain', 'deployment.spec.strategy.rollingUpdate')).toMatch(/^\s+maxSurge\s+<(IntOrString|string)>/m);
    expect(await ok('explain', 'cronjob.spec.jobTemplate.spec')).toMatch(/^\s+backoffLimit\s+<integer>/m);
    expect(await ok('explain', 'ingresses.spec.rules.http.paths')).toMatch(/^\s+pathType\s+<string>/m);
    expect(await ok('explain', 'clusterrole.rules')).toMatch(/^\s+verbs\s+<\[\]string> -required-/m);
    // From the OpenAPI v2 document (protobuf), kubectl's other explain.
    expect(await ok('explain', 'deployment.spec.strategy', '--output', 'plaintext-openapiv2')).toMatch(/^\s+rollingUpdate\s+<Object>/m);
  });

  it('scales, waits for the rollout and a condition', async ({ expect }) => {
    expect((await ok('scale', 'deployment', 'web', '--replicas=3')).trim()).toBe('deployment.apps/web scaled');
    expect(await ok('rollout', 'status', 'deployment/web', '--timeout=60s')).toMatch(/successfully rolled out/);
    expect((await ok('wait', '--for=condition=Available', 'deployment/web', '--timeout=60s')).trim()).toBe('deployment.apps/web condition met');
    expect((await ok('get', 'deployment', 'web', '-o', 'jsonpath={.status.readyReplicas}')).trim()).toBe('3');
    // kubectl before 1.2x writes autoscaling/v1 here, newer ones autoscaling/v2: both are served.
    expect((await ok('autoscale', 'deployment', 'web', '--max=5', '--cpu-percent=50')).trim()).toBe('horizontalpodautoscaler.autoscaling/web autoscaled');
    expect(await ok('get', 'hpa', 'web')).toMatch(/^web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+1\s+5\s+/m);
  });

  it('patches with every patch type', async ({ expect }) => {
    expect((await ok('patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"mode":"slow"}}')).trim()).toBe('configmap/settings patched');
    expect((await ok('patch', 'configmap', 'settings', '--type=json', '-p', '[{"op":"add","path":"/data/extra","value":"1"}]')).trim()).toBe(
      'configmap/settings patched',
    );
    expect((await ok('patch', 'deployment', 'web', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}')).trim()).toBe(
      'deployment.apps/web patched',
    );
    const data = JSON.parse(await ok('get', 'configmap', 'settings', '-o', 'json')).data;
    expect(data).toEqual({ mode: 'slow', level: '3', extra: '1' });
    const containers = JSON.parse(await ok('get', 'deployment', 'web', '-o', 'json')).spec.template.spec.containers;
    expect(containers).toHaveLength(1);
    expect(containers[0]).toMatchObject({ name: 'nginx', image: 'nginx:1.28', ports: [{ containerPort: 80 }] });
  });

  it('adds a debug container to a running pod (pods/ephemeralcontainers)', async ({ expect }) => {
    expect((await ok('run', 'debug-target', '--image=nginx')).trim()).toBe('pod/debug-target created');
    await ok('debug', 'debug-target', '--image=busybox', '-c', 'debugger');
    expect(await ok('get', 'pod', 'debug-target', '-o', 'jsonpath={.spec.ephemeralContainers[*].name}')).toBe('debugger');
  });

  it('deletes and waits for the objects to go', async ({ expect }) => {
    // Newer kubectl add "from <namespace> namespace".
    expect(await ok('delete', 'configmap', 'watched', '--wait')).toMatch(/^configmap "watched" deleted/);
    expect(await ok('delete', 'deployment', 'applied', '--wait', '--timeout=60s')).toMatch(/^deployment\.apps "applied" deleted/);
    const gone = await kubectl(['-n', ns, 'get', 'configmap', 'watched']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/NotFound.*"watched" not found/);
  });

  it('answers auth can-i and lists upstream 1.36’s default resources, and metrics.k8s.io', async ({ expect }) => {
    expect((await ok('auth', 'can-i', 'create', 'deployments')).trim()).toBe('yes');
    const listed = await ok('api-resources', '--no-headers');
    const expected = [...upstreamResources(), ...METRICS_RESOURCES];
    expect(listed.trim().split('\n')).toHaveLength(expected.length);
    for (const resource of expected) {
      const cells = [resource.name, ...(resource.shortNames ? [resource.shortNames] : []), resource.apiVersion, resource.namespaced, resource.kind];
      expect(listed).toMatch(new RegExp(`^${cells.map((cell) => cell.replaceAll('.', '\\.')).join('\\s+')}\\s*$`, 'm'));
    }
  });
});
