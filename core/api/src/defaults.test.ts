import { describe, expect, it } from 'vitest';
import { defaultImagePullPolicy, defaultPod } from './defaults.js';
import type { Pod } from './types.js';

describe('defaultImagePullPolicy', () => {
  it('pulls always for :latest or untagged images, otherwise if not present', () => {
    expect(defaultImagePullPolicy('nginx')).toBe('Always');
    expect(defaultImagePullPolicy('nginx:latest')).toBe('Always');
    expect(defaultImagePullPolicy('localhost:5000/nginx')).toBe('Always');
    expect(defaultImagePullPolicy('nginx:1.25')).toBe('IfNotPresent');
    expect(defaultImagePullPolicy('localhost:5000/nginx:1.25')).toBe('IfNotPresent');
    expect(defaultImagePullPolicy('nginx@sha256:abcd')).toBe('IfNotPresent');
  });
});

describe('defaultPod', () => {
  it('fills in what Kubernetes adds to `kubectl run nginx --image=nginx`', () => {
    const pod = {
      metadata: { name: 'nginx', namespace: 'default' },
      spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }] },
    } as Pod;
    defaultPod(pod);
    expect(pod.spec).toEqual({
      containers: [
        {
          name: 'nginx',
          image: 'nginx',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'Always',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
    });
  });

  it('keeps what was set, defaults requests from limits, probes, volumes and host ports', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        hostNetwork: true,
        enableServiceLinks: false,
        containers: [
          {
            name: 'c',
            image: 'app:2',
            imagePullPolicy: 'Never',
            ports: [{ containerPort: 8080 }],
            resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } },
            livenessProbe: { httpGet: { port: 8080 } },
            env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          },
        ],
        volumes: [{ name: 'a' }, { name: 'b', secret: { secretName: 's' } }, { name: 'c', hostPath: { path: '/x' } }],
      },
    } as unknown as Pod;
    defaultPod(pod);
    const container = pod.spec.containers[0]!;
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.enableServiceLinks).toBe(false);
    expect(container.imagePullPolicy).toBe('Never');
    expect(container.resources).toEqual({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } });
    expect(container.ports).toEqual([{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }]);
    expect(container.livenessProbe).toEqual({
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(container.env).toEqual([{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }]);
    expect(pod.spec.volumes).toEqual([
      { name: 'a', emptyDir: {} },
      { name: 'b', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'c', hostPath: { path: '/x', type: '' } },
    ]);
  });

  it('keeps the deprecated serviceAccount a copy of serviceAccountName, and reads it when that is empty', () => {
    const spec = (fields: object) => {
      const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x:1' }], ...fields } } as Pod;
      defaultPod(pod);
      return { serviceAccountName: pod.spec.serviceAccountName, serviceAccount: pod.spec.serviceAccount };
    };
    expect(spec({ serviceAccountName: 'builder' })).toEqual({ serviceAccountName: 'builder', serviceAccount: 'builder' });
    expect(spec({ serviceAccount: 'old' })).toEqual({ serviceAccountName: 'old', serviceAccount: 'old' });
    expect(spec({ serviceAccountName: 'new', serviceAccount: 'old' })).toEqual({ serviceAccountName: 'new', serviceAccount: 'new' });
    expect(spec({ serviceAccount: '' })).toEqual({ serviceAccountName: undefined, serviceAccount: undefined });
  });

  it('is idempotent', () => {
    const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } } as Pod;
    defaultPod(pod);
    const once = structuredClone(pod);
    defaultPod(pod);
    expect(pod).toEqual(once);
  });
});
