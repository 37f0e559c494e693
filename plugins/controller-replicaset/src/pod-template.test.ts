import { RESOURCES, type ReplicaSet } from '@skiff/api';
import { newControllerRef } from '@skiff/controller-manager';
import { describe, expect, it } from 'vitest';
import { podFromTemplate } from './pod-template.js';

describe('podFromTemplate', () => {
  const rs: ReplicaSet = {
    metadata: { name: 'web-5d8f', namespace: 'shop', uid: 'rs-uid' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, annotations: { note: 'x' } },
        spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
      },
    },
  };

  it('builds an owned pod from the template, named by the server from generateName', () => {
    const ref = newControllerRef(rs, RESOURCES.replicasets);
    const pod = podFromTemplate(rs, ref);
    expect(pod).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'web-5d8f-', namespace: 'shop', labels: { app: 'web' }, annotations: { note: 'x' }, ownerReferences: [ref] },
      spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
    });
  });

  it('copies the template, so the pod can be changed without touching the ReplicaSet', () => {
    const pod = podFromTemplate(rs, newControllerRef(rs, RESOURCES.replicasets));
    pod.metadata.labels!.app = 'changed';
    pod.spec.containers[0]!.image = 'changed';
    expect(rs.spec.template.metadata!.labels!.app).toBe('web');
    expect(rs.spec.template.spec.containers[0]!.image).toBe('nginx:1.25');
  });
});
