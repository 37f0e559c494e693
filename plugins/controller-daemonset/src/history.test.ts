import { readFileSync } from 'node:fs';
import type { ControllerRevision, DaemonSet, PodTemplateSpec } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { templateHash } from '@skiff/controller-manager';
import { revisionMatches, revisionsToCleanUp, splitRevisions, templatePatch } from './history.js';
import { testDaemonSet, testPod } from './test-objects.js';

const revision = (name: string, number: number, data: unknown): ControllerRevision => ({
  metadata: { name, namespace: 'default', labels: { app: 'agent', 'controller-revision-hash': name } },
  revision: number,
  data,
});

/**
 * Templates as Skiff's API server returns them (plus one written by hand: a time with an offset and
 * fractions, fields Go does not know, empty values) beside the data upstream's DaemonSet controller
 * computes for them, produced by Go 1.21 with k8s.io/api of Kubernetes v1.28.7: the DaemonSet read into
 * its Go type, written as JSON, read into a generic map, its template given `$patch: replace`, written again.
 */
const fixtures: { name: string; template: PodTemplateSpec; data: string }[] = JSON.parse(
  readFileSync(new URL('../test-data/revision-data.json', import.meta.url), 'utf8'),
);

/** Go escapes these in JSON strings; JSON.stringify does not. The API server writes the stored data out. */
const goEscaped = (json: string) => json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('ControllerRevision history', () => {
  it('stores the template as the strategic merge patch kubectl rollout undo sends back, in Go’s JSON form', () => {
    const ds = testDaemonSet();
    expect(JSON.stringify(templatePatch(ds))).toBe(
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"agent"}},' +
        '"spec":{"containers":[{"image":"agent:1","name":"agent","resources":{}}]}}}}',
    );
  });

  it.each(fixtures.map((fixture) => [fixture.name, fixture] as const))('writes the bytes upstream writes for the %s template', (_name, fixture) => {
    const ds: DaemonSet = testDaemonSet({ template: fixture.template });
    expect(goEscaped(JSON.stringify(templatePatch(ds)))).toBe(fixture.data);
  });

  it('matches a revision written before its data followed Go’s form', () => {
    const ds = testDaemonSet();
    const earlier = { spec: { template: { ...structuredClone(ds.spec.template), $patch: 'replace' } } };
    expect(revisionMatches(ds, revision('r', 1, earlier))).toBe(true);
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
