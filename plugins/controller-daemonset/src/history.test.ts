import type { ControllerRevision } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { templateHash } from '@skiff/controller-manager';
import { revisionMatches, revisionsToCleanUp, splitRevisions, templatePatch } from './history.js';
import { testDaemonSet, testPod } from './test-objects.js';

const revision = (name: string, number: number, data: unknown): ControllerRevision => ({
  metadata: { name, namespace: 'default', labels: { app: 'agent', 'controller-revision-hash': name } },
  revision: number,
  data,
});

describe('ControllerRevision history', () => {
  it('stores the template as the strategic merge patch kubectl rollout undo sends back', () => {
    const ds = testDaemonSet();
    expect(templatePatch(ds)).toEqual({ spec: { template: { ...ds.spec.template, $patch: 'replace' } } });
  });

  it('matches a revision to the template whatever the key order', () => {
    const ds = testDaemonSet();
    const reordered = { spec: { template: { $patch: 'replace', spec: ds.spec.template.spec, metadata: ds.spec.template.metadata } } };
    expect(revisionMatches(ds, revision('r', 1, reordered))).toBe(true);
    const other = testDaemonSet({ template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'agent:2' }] } } });
    expect(revisionMatches(other, revision('r', 1, reordered))).toBe(false);
    expect(splitRevisions(other, [revision('r', 1, reordered), revision('s', 2, templatePatch(other))])).toEqual({
      current: [expect.objectContaining({ revision: 2 })],
      old: [expect.objectContaining({ revision: 1 })],
    });
  });

  it('hashes equal templates alike and moves the hash with collisionCount', () => {
    const ds = testDaemonSet();
    const hash = templateHash(ds.spec.template);
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(templateHash(structuredClone(ds.spec.template))).toBe(hash);
    expect(templateHash(ds.spec.template, 1)).not.toBe(hash);
  });

  it('cleans up the oldest revisions beyond the limit that no pod still runs', () => {
    const ds = testDaemonSet({ revisionHistoryLimit: 1 });
    const old = [revision('r3', 3, {}), revision('r1', 1, {}), revision('r2', 2, {})];
    expect(revisionsToCleanUp(ds, old, []).map((r) => r.metadata.name)).toEqual(['r1', 'r2']);
    expect(revisionsToCleanUp(ds, old, [testPod('p', 'n1', 'r1')]).map((r) => r.metadata.name)).toEqual(['r2', 'r3']);
    expect(revisionsToCleanUp(testDaemonSet(), old, [])).toEqual([]);
  });
});
