import { describe, expect, it } from 'vitest';
import { createNodeInfo } from '../framework/node-info.js';
import { makeNode, makePod } from '../test-support/objects.js';
import { nodeReady } from './node-ready.js';

describe('NodeReady', () => {
  const withReady = (status?: 'True' | 'False' | 'Unknown') =>
    createNodeInfo({ ...makeNode('n'), status: { allocatable: { cpu: '1' }, conditions: status ? [{ type: 'Ready', status }] : [] } });

  it('keeps pods off nodes that are not ready, in the taint’s words', () => {
    expect(nodeReady.filter!(new Map(), makePod('p'), withReady('True'))).toBeNull();
    expect(nodeReady.filter!(new Map(), makePod('p'), withReady('False'))?.reasons).toEqual(['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']);
    expect(nodeReady.filter!(new Map(), makePod('p'), withReady('Unknown'))?.reasons).toEqual([
      'node(s) had untolerated taint {node.kubernetes.io/unreachable: }',
    ]);
    expect(nodeReady.filter!(new Map(), makePod('p'), withReady())?.reasons).toEqual(['node(s) had untolerated taint {node.kubernetes.io/unreachable: }']);
  });

  it('lets pods tolerating every taint (operator Exists, no key) through', () => {
    const tolerant = makePod('p', undefined, { tolerations: [{ operator: 'Exists' }] });
    expect(nodeReady.filter!(new Map(), tolerant, withReady('False'))).toBeNull();
    const wrongEffect = makePod('p', undefined, { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }] });
    expect(nodeReady.filter!(new Map(), wrongEffect, withReady('False'))).not.toBeNull();
  });
});
