import type { Node } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { peersOf } from './peers.js';

const node = (name: string, podCIDR?: string, internalIP?: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: podCIDR ? { podCIDR } : {},
  status: internalIP
    ? {
        addresses: [
          { type: 'Hostname', address: name },
          { type: 'InternalIP', address: internalIP },
        ],
      }
    : {},
});

describe('the peers a pod network routes to', () => {
  it('are the other nodes with a range and an InternalIP on another host, by name', () => {
    const nodes = [
      node('self', '10.244.1.0/24', '192.168.0.1'),
      node('same-host', '10.244.2.0/24', '192.168.0.1'),
      node('zeta', '10.244.4.0/24', '192.168.0.3'),
      node('alpha', '10.244.3.0/24', '192.168.0.2'),
      node('no-range', undefined, '192.168.0.4'),
      node('no-address', '10.244.5.0/24'),
    ];
    expect(peersOf(nodes, { name: 'self', ip: '192.168.0.1' })).toEqual([
      { name: 'alpha', podCIDR: '10.244.3.0/24', internalIP: '192.168.0.2' },
      { name: 'zeta', podCIDR: '10.244.4.0/24', internalIP: '192.168.0.3' },
    ]);
  });
});
