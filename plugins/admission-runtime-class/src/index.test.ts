import { describe, expect, it } from 'vitest';
import { Kernel, type AdmissionRequest } from '@skiff/kernel';
import type { KubeObject, Pod, RuntimeClass } from '@skiff/api';
import { admissionRequest, admit } from '@skiff/testing';
import plugin from './index.js';
import { RuntimeClassAdmissionError } from './errors.js';
import { mergeTolerations } from './scheduling.js';

const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);

const pod = (spec: Partial<Pod['spec']> = {}, name = 'web'): Pod =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } }) as Pod;

const runtimeClass = (name: string, fields: Partial<RuntimeClass> = {}): RuntimeClass => ({
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name },
  handler: 'runc',
  ...fields,
});

const classes: KubeObject[] = [
  runtimeClass('plain'),
  runtimeClass('kata', { overhead: { podFixed: { cpu: '10m', memory: '1Mi' } } }),
  runtimeClass('sandboxed', {
    scheduling: {
      nodeSelector: { sandbox: 'true' },
      tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }],
    },
  }),
];

const request = (object: Pod, overrides: Partial<AdmissionRequest> = {}) => admissionRequest({ object, objects: classes, ...overrides });

async function admitted(object: Pod, overrides: Partial<AdmissionRequest> = {}): Promise<Pod> {
  return (await admit(kernel, request(object, overrides))) as Pod;
}

async function refusal(object: Pod, overrides: Partial<AdmissionRequest> = {}): Promise<RuntimeClassAdmissionError> {
  const err = await admit(kernel, request(object, overrides)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RuntimeClassAdmissionError);
  expect((err as RuntimeClassAdmissionError).status).toBe(403);
  return err as RuntimeClassAdmissionError;
}

describe('RuntimeClass admission: the class must exist', () => {
  it('refuses a pod naming a RuntimeClass that does not exist, in upstream’s words', async () => {
    const err = await refusal(pod({ runtimeClassName: 'gvisor' }));
    expect(err.message).toBe('pods "web" is forbidden: pod rejected: RuntimeClass "gvisor" not found');
    expect(err.code).toBe('SKIFF_ERR_RUNTIME_CLASS_NOT_FOUND');
    const generated = pod({ runtimeClassName: 'gvisor' }, '');
    generated.metadata.generateName = 'web-';
    expect((await refusal(generated)).message).toMatch(/^pods "web-" is forbidden: /);
  });

  it('leaves pods naming no class, or a class without overhead and scheduling, as they are', async () => {
    expect((await admitted(pod())).spec).toEqual(pod().spec);
    const plain = await admitted(pod({ runtimeClassName: 'plain' }));
    expect(plain.spec.overhead).toBeUndefined();
    expect(plain.spec.nodeSelector).toBeUndefined();
    expect(plain.spec.tolerations).toBeUndefined();
  });

  it('judges only pod creation: updates, subresources and other kinds pass', async () => {
    const missing = pod({ runtimeClassName: 'gvisor' });
    await expect(admit(kernel, request(missing, { operation: 'UPDATE', oldObject: missing }))).resolves.toBeDefined();
    await expect(admit(kernel, request(missing, { subresource: 'status' }))).resolves.toBeDefined();
  });
});

describe('RuntimeClass admission: overhead', () => {
  it('sets spec.overhead from the class’s overhead.podFixed', async () => {
    expect((await admitted(pod({ runtimeClassName: 'kata' }))).spec.overhead).toEqual({ cpu: '10m', memory: '1Mi' });
  });

  it('accepts a pod stating the same overhead (compared as amounts) and refuses a different one', async () => {
    expect((await admitted(pod({ runtimeClassName: 'kata', overhead: { cpu: '0.01', memory: '1Mi' } }))).spec.overhead).toEqual({
      cpu: '10m',
      memory: '1Mi',
    });
    const err = await refusal(pod({ runtimeClassName: 'kata', overhead: { cpu: '20m', memory: '1Mi' } }));
    expect(err.message).toBe("pods \"web\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    expect(err.code).toBe('SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_MISMATCH');
  });

  it('refuses an overhead without a class that defines one', async () => {
    for (const spec of [{ overhead: { cpu: '1' } }, { runtimeClassName: 'plain', overhead: { cpu: '1' } }]) {
      const err = await refusal(pod(spec));
      expect(err.message).toBe('pods "web" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
      expect(err.code).toBe('SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_WITHOUT_CLASS');
    }
  });
});

describe('RuntimeClass admission: scheduling', () => {
  it('adds the class’s node selector and tolerations to the pod’s own', async () => {
    const result = await admitted(
      pod({ runtimeClassName: 'sandboxed', nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'a', operator: 'Equal', value: 'b', effect: 'NoExecute' }] }),
    );
    expect(result.spec.nodeSelector).toEqual({ disk: 'ssd', sandbox: 'true' });
    expect(result.spec.tolerations).toEqual([
      { key: 'a', operator: 'Equal', value: 'b', effect: 'NoExecute' },
      { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect((await admitted(pod({ runtimeClassName: 'sandboxed' }))).spec.nodeSelector).toEqual({ sandbox: 'true' });
  });

  it('refuses a pod selecting another value for a key the class selects', async () => {
    const err = await refusal(pod({ runtimeClassName: 'sandboxed', nodeSelector: { sandbox: 'false' } }));
    expect(err.message).toBe('pods "web" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false');
    expect(err.code).toBe('SKIFF_ERR_RUNTIME_CLASS_NODE_SELECTOR_CONFLICT');
  });

  it('merges tolerations keeping only the wider of two, the first of two equal ones', () => {
    const exists = { key: 'k', operator: 'Exists', effect: 'NoSchedule' };
    const equal = { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' };
    expect(mergeTolerations([equal], [exists])).toEqual([exists]);
    expect(mergeTolerations([exists], [equal, { ...exists }])).toEqual([exists]);
    const everything = { operator: 'Exists' };
    expect(mergeTolerations([equal, exists], [everything])).toEqual([everything]);
    const short = { key: 'n', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
    const long = { ...short, tolerationSeconds: 60 };
    expect(mergeTolerations([short], [long])).toEqual([long]);
    expect(mergeTolerations([long], [short])).toEqual([long]);
    const forever = { key: 'n', operator: 'Exists', effect: 'NoExecute' };
    expect(mergeTolerations([forever], [long])).toEqual([forever]);
    expect(mergeTolerations([long], [forever])).toEqual([forever]);
  });
});
