import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { kubectlVersions, runProgram } from './clients.js';
import { startSkiff, tempDir, type RunningSkiff } from './harness.js';

// A CustomResourceDefinition's whole life with the real kubectl 1.36: created and Established, its custom resources
// created, listed, watched, patched and applied, printed with its columns, explained, refused with upstream's
// messages (schema, CEL, unknown fields), defaulted, scaled, served in a second version — then deleted, taking
// its custom resources with it.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
let skiff: RunningSkiff;
const dataDir = tempDir('crd');
const cacheDir = tempDir('crd-cache');

const kubectl = (args: string[], input?: string) =>
  runProgram(kubectl136.path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, ...args], { ...(input ? { input } : {}), timeoutMs: 30_000 });
const ok = async (args: string[], input?: string): Promise<string> => {
  const result = await kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  return result.stdout;
};
const fails = async (args: string[], input?: string): Promise<string> => {
  const result = await kubectl(args, input);
  if (result.code === 0) throw new Error(`kubectl ${args.join(' ')} succeeded, expected a failure\nstdout:\n${result.stdout}`);
  return result.stderr;
};

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.minReplicas <= self.replicas"
                  message: replicas must be at least minReplicas
              properties:
                cronSpec:
                  type: string
                  pattern: '^(\\S+ ){4}\\S+$'
                image:
                  type: string
                  minLength: 3
                replicas:
                  type: integer
                  minimum: 1
                  maximum: 10
                  default: 1
                minReplicas:
                  type: integer
                  default: 1
                mode:
                  type: string
                  enum: [Allow, Forbid]
                  default: Allow
                ports:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: { type: string }
                      port: { type: integer }
              required: [cronSpec, image]
            status:
              type: object
              properties:
                replicas: { type: integer }
                selector: { type: string }
                lastRun: { type: string, format: date-time }
                conditions:
                  type: array
                  items:
                    type: object
                    properties:
                      type: { type: string }
                      status: { type: string }
      subresources:
        status: {}
        scale:
          specReplicasPath: .spec.replicas
          statusReplicasPath: .status.replicas
          labelSelectorPath: .status.selector
      additionalPrinterColumns:
        - name: Spec
          type: string
          jsonPath: .spec.cronSpec
        - name: Replicas
          type: integer
          jsonPath: .spec.replicas
        - name: Age
          type: date
          jsonPath: .metadata.creationTimestamp
        - name: Ready
          type: string
          priority: 1
          jsonPath: .status.conditions[?(@.type=="Ready")].status
    - name: v1beta1
      served: true
      storage: false
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;

const cronTab = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name, namespace: 'default' }, spec });

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir]);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('a CustomResourceDefinition with kubectl 1.36', () => {
  it('is created and becomes Established', async () => {
    expect((await ok(['apply', '-f', '-'], CRD)).trim()).toBe('customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created');
    expect((await ok(['wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=10s'])).trim()).toBe(
      'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met',
    );
    const crd = JSON.parse(await ok(['get', 'crd', 'crontabs.stable.example.com', '-o', 'json']));
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'crontabs', kind: 'CronTab', shortNames: ['ct'] });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(crd.metadata.finalizers).toContain('customresourcecleanup.apiextensions.k8s.io');
    const resources = await ok(['api-resources', '--api-group=stable.example.com']);
    expect(resources).toMatch(/^crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab$/m);
  });

  it('creates, lists with its columns and short name, and defaults', async () => {
    expect((await ok(['create', '-f', '-'], cronTab('nightly', { cronSpec: '0 3 * * *', image: 'busybox' }))).trim()).toBe(
      'crontab.stable.example.com/nightly created',
    );
    const table = await ok(['get', 'ct']);
    expect(table).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+AGE\n/);
    expect(table).toMatch(/^nightly\s+0 3 \* \* \*\s+1\s+\d+s\n/m);
    expect(await ok(['get', 'all', '-o', 'name'])).toContain('crontab.stable.example.com/nightly');
    const object = JSON.parse(await ok(['get', 'crontab', 'nightly', '-o', 'json']));
    expect(object.spec).toEqual({ cronSpec: '0 3 * * *', image: 'busybox', replicas: 1, minReplicas: 1, mode: 'Allow' });
  });

  it('refuses what the schema and its CEL rules refuse, naming the field as upstream does', async () => {
    const low = await fails(['create', '-f', '-'], cronTab('low', { cronSpec: '0 3 * * *', image: 'busybox', replicas: 0 }));
    expect(low).toContain('spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1');
    const missing = await fails(['create', '-f', '-'], cronTab('missing', { cronSpec: '0 3 * * *' }));
    expect(missing).toContain('spec.image: Required value');
    const mode = await fails(['create', '-f', '-'], cronTab('mode', { cronSpec: '0 3 * * *', image: 'busybox', mode: 'Sometimes' }));
    expect(mode).toContain('spec.mode: Unsupported value: "Sometimes": supported values: "Allow", "Forbid"');
    const rule = await fails(['create', '-f', '-'], cronTab('rule', { cronSpec: '0 3 * * *', image: 'busybox', replicas: 2, minReplicas: 5 }));
    expect(rule).toContain('replicas must be at least minReplicas');
    const unknown = await fails(['create', '-f', '-'], cronTab('unknown', { cronSpec: '0 3 * * *', image: 'busybox', colour: 'red' }));
    expect(unknown).toContain('unknown field "spec.colour"');
  });

  it('watches, patches, applies server-side and writes status through its subresource', async () => {
    const watch = runProgram(
      kubectl136.path,
      ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, 'get', 'ct', '-w', '--request-timeout=4s', '-o', 'name'],
      {
        timeoutMs: 15_000,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    await ok(['create', '-f', '-'], cronTab('hourly', { cronSpec: '0 * * * *', image: 'busybox' }));
    expect((await watch).stdout).toContain('crontab.stable.example.com/hourly');

    expect((await ok(['patch', 'ct', 'hourly', '--type=merge', '-p', '{"spec":{"replicas":4}}'])).trim()).toBe('crontab.stable.example.com/hourly patched');
    // Custom resources have no Go types to merge lists by: strategic merge patches are refused, as upstream does.
    expect(await fails(['patch', 'ct', 'hourly', '--type=strategic', '-p', '{"spec":{"replicas":5}}'])).toContain(
      'accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
    const applied = cronTab('hourly', { cronSpec: '0 * * * *', image: 'busybox', ports: [{ name: 'http', port: 80 }] });
    await ok(['apply', '--server-side', '--field-manager=ops', '-f', '-'], applied);
    const object = JSON.parse(await ok(['get', 'ct', 'hourly', '-o', 'json', '--show-managed-fields']));
    expect(object.spec.ports).toEqual([{ name: 'http', port: 80 }]);
    expect(object.metadata.managedFields.map((m: { manager: string }) => m.manager)).toContain('ops');

    await ok([
      'patch',
      'ct',
      'hourly',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":4,"selector":"app=hourly","conditions":[{"type":"Synced","status":"False"},{"type":"Ready","status":"True"}]}}',
    ]);
    // A printer column filtering a list, as many CRDs declare (priority 1: -o wide).
    expect(await ok(['get', 'ct', 'hourly', '-o', 'wide'])).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+AGE\s+READY\nhourly\s+0 \* \* \* \*\s+4\s+\S+\s+True\n/);
    // Status written through the object itself is ignored when the status subresource is on.
    await ok(['patch', 'ct', 'hourly', '--type=merge', '-p', '{"status":{"replicas":9}}']);
    expect(await ok(['get', 'ct', 'hourly', '-o', 'jsonpath={.status.replicas}'])).toBe('4');
  });

  it('refuses a CRD whose printer column path cannot be read, naming it', async () => {
    const bad = CRD.replace('crontabs.stable.example.com', 'badcols.stable.example.com')
      .replace('plural: crontabs', 'plural: badcols')
      .replace('singular: crontab', 'singular: badcol')
      .replace('kind: CronTab', 'kind: BadCol')
      .replace('shortNames: [ct]', 'shortNames: [bc]')
      .replace('jsonPath: .spec.cronSpec', 'jsonPath: .spec..cronSpec');
    expect(await fails(['apply', '-f', '-'], bad)).toContain('spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: ".spec..cronSpec"');
  });

  it('scales through the scale subresource', async () => {
    expect((await ok(['scale', 'crontab', 'hourly', '--replicas=3'])).trim()).toBe('crontab.stable.example.com/hourly scaled');
    expect(await ok(['get', 'ct', 'hourly', '-o', 'jsonpath={.spec.replicas}'])).toBe('3');
  });

  it('is explained field by field', async () => {
    const spec = await ok(['explain', 'crontab.spec']);
    expect(spec).toContain('KIND:       CronTab');
    expect(spec).toMatch(/cronSpec\s+<string> -required-/);
    expect(spec).toMatch(/replicas\s+<integer>/);
    expect(await ok(['explain', 'crontab.spec.ports'])).toMatch(/port\s+<integer>/);
  });

  it('serves the second version from the same objects', async () => {
    const v1beta1 = JSON.parse(await ok(['get', 'crontabs.v1beta1.stable.example.com', 'nightly', '-o', 'json']));
    expect(v1beta1.apiVersion).toBe('stable.example.com/v1beta1');
    expect(v1beta1.spec.cronSpec).toBe('0 3 * * *');
  });

  it('takes its custom resources with it when deleted', async () => {
    expect((await ok(['delete', 'crd', 'crontabs.stable.example.com', '--timeout=20s'])).trim()).toBe(
      'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted',
    );
    expect(await fails(['get', 'crontabs.stable.example.com'])).toContain(`the server doesn't have a resource type "crontabs"`);
    // Created again, it starts empty.
    await ok(['apply', '-f', '-'], CRD);
    await ok(['wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=10s']);
    expect((await kubectl(['get', 'crontabs', '-A', '-o', 'name'])).stdout.trim()).toBe('');
  });
});
