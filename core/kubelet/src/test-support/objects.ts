import type { Pod } from '@skiff/api';
import type { Logger } from '@skiff/kernel';

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

/** A pod bound to node-1 with one nginx container. */
export function boundPod(name: string, extra: Partial<Pod['spec']> = {}, uid = `uid-${name}`): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'nginx:1.27' }], ...extra },
  };
}
