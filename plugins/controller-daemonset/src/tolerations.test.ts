import { describe, expect, it } from 'vitest';
import { DAEMON_POD_TOLERATIONS, withDaemonTolerations } from './tolerations.js';

describe('DaemonSet tolerations', () => {
  it('adds the defaults after the pod own tolerations, and network-unavailable for host-network pods', () => {
    const own = { key: 'dedicated', operator: 'Equal' as const, value: 'db', effect: 'NoSchedule' };
    expect(withDaemonTolerations({ containers: [], tolerations: [own] })).toEqual([own, ...DAEMON_POD_TOLERATIONS]);
    expect(withDaemonTolerations({ containers: [], hostNetwork: true }).at(-1)).toEqual({
      key: 'node.kubernetes.io/network-unavailable',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
  });

  it('replaces a toleration of the pod that matches a default instead of adding a second one', () => {
    const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists' as const, effect: 'NoExecute', tolerationSeconds: 300 };
    const result = withDaemonTolerations({ containers: [], tolerations: [own] });
    expect(result).toHaveLength(DAEMON_POD_TOLERATIONS.length);
    expect(result[0]).toEqual({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' });
  });
});
