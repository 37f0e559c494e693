import { describe, expect, it } from 'vitest';
import { Kernel, type AdmissionRequest } from '@skiff/kernel';
import type { KubeObject, Pod, PriorityClass } from '@skiff/api';
import { admissionRequest, admit } from '@skiff/testing';
import plugin from './index.js';
import { PriorityAdmissionError } from './errors.js';

const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);

const pod = (spec: Partial<Pod['spec']> = {}, name = 'web'): Pod =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } }) as Pod;

const priorityClass = (name: string, value: number, fields: Partial<PriorityClass> = {}): PriorityClass => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  preemptionPolicy: 'PreemptLowerPriority',
  ...fields,
});

const classes: KubeObject[] = [priorityClass('gold', 1000), priorityClass('batch', 10, { preemptionPolicy: 'Never' })];

async function admitted(object: Pod, overrides: Partial<AdmissionRequest> = {}): Promise<Pod> {
  return (await admit(kernel, admissionRequest({ object, objects: classes, ...overrides }))) as Pod;
}

async function refusal(request: AdmissionRequest): Promise<PriorityAdmissionError> {
  const err = await admit(kernel, request).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PriorityAdmissionError);
  return err as PriorityAdmissionError;
}

const classRequest = (operation: AdmissionRequest['operation'], name: string, object?: PriorityClass): AdmissionRequest =>
  admissionRequest({
    operation,
    object,
    name,
    namespace: '',
    kind: { group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass' },
    resource: { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' },
  });

describe('Priority admission: pods', () => {
  it('gives a pod that names no class priority 0 and PreemptLowerPriority when no class is the default', async () => {
    const result = await admitted(pod());
    expect(result.spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect(result.spec.priorityClassName).toBeUndefined();
  });

  it('takes the value and preemption policy of the class the pod names', async () => {
    expect((await admitted(pod({ priorityClassName: 'gold' }))).spec).toMatchObject({ priority: 1000, preemptionPolicy: 'PreemptLowerPriority' });
    expect((await admitted(pod({ priorityClassName: 'batch' }))).spec).toMatchObject({ priority: 10, preemptionPolicy: 'Never' });
  });

  it('refuses a pod naming a class that does not exist, in upstream’s words', async () => {
    const err = await refusal(admissionRequest({ object: pod({ priorityClassName: 'platinum' }), objects: classes }));
    expect(err.message).toBe('pods "web" is forbidden: no PriorityClass with name platinum was found');
    expect(err.status).toBe(403);
    expect(err.code).toBe('SKIFF_ERR_PRIORITY_CLASS_NOT_FOUND');
  });

  it('accepts a pod stating the priority its class gives, and refuses one stating another', async () => {
    expect((await admitted(pod({ priorityClassName: 'gold', priority: 1000 }))).spec.priority).toBe(1000);
    const err = await refusal(admissionRequest({ object: pod({ priorityClassName: 'gold', priority: 5 }), objects: classes }));
    expect(err.message).toBe(
      'pods "web" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
    );
    const generated = pod({ priority: 7 }, '');
    generated.metadata.generateName = 'web-';
    const none = await refusal(admissionRequest({ object: generated, objects: classes }));
    expect(none.message).toMatch(/^pods "web-" is forbidden: the integer value of priority \(7\)/);
  });

  it('refuses a pod stating a preemption policy other than its class’s', async () => {
    const err = await refusal(admissionRequest({ object: pod({ priorityClassName: 'batch', preemptionPolicy: 'PreemptLowerPriority' }), objects: classes }));
    expect(err.message).toBe(
      'pods "web" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
    );
  });

  it('keeps the stored priority on an update that leaves it out, and leaves subresources alone', async () => {
    const old = pod({ priorityClassName: 'gold', priority: 1000, preemptionPolicy: 'PreemptLowerPriority' });
    const updated = await admitted(pod({ priorityClassName: 'gold' }), { operation: 'UPDATE', oldObject: old });
    expect(updated.spec).toMatchObject({ priority: 1000, preemptionPolicy: 'PreemptLowerPriority' });
    const status = await admitted(pod(), { operation: 'UPDATE', subresource: 'status', oldObject: old });
    expect(status.spec.priority).toBeUndefined();
  });
});

describe('Priority admission: PriorityClasses', () => {
  it('refuses deleting a system class and lets other classes go', async () => {
    const err = await refusal(classRequest('DELETE', 'system-node-critical'));
    expect(err.message).toBe('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted');
    await expect(admit(kernel, classRequest('DELETE', 'system-cluster-critical'))).rejects.toThrow('cannot be deleted');
    await expect(admit(kernel, classRequest('DELETE', 'gold'))).resolves.toBeUndefined();
  });
});
