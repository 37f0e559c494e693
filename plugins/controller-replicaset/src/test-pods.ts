import type { Pod, PodStatus } from '@skiff/api';

/** A pod as the tests need it: name, optional node, phase, readiness and creation time. */
export function testPod(
  name: string,
  options: {
    node?: string;
    phase?: PodStatus['phase'];
    readySince?: string;
    created?: string;
    restarts?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  } = {},
): Pod {
  const status: PodStatus = { phase: options.phase ?? 'Running' };
  if (options.readySince) status.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: options.readySince }];
  if (options.restarts !== undefined)
    status.containerStatuses = [{ name: 'app', image: 'nginx', imageID: '', ready: Boolean(options.readySince), restartCount: options.restarts, state: {} }];
  const pod: Pod = {
    metadata: {
      name,
      namespace: 'default',
      creationTimestamp: options.created ?? '2024-01-01T00:00:00Z',
      labels: options.labels,
      annotations: options.annotations,
    },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...(options.node ? { nodeName: options.node } : {}) },
    status,
  };
  return pod;
}
