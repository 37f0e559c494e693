import { describe, expect, it } from 'vitest';
import { applyApplyPatch } from '../patch/apply-patch.js';
import { schemaMergeKeys } from '../patch/schema-merge-keys.js';
import { kindSchema } from '../schemas/from-facts.js';
import type { ObjectSchema } from '../schemas/language.js';
import type { KubeObject } from '../types.js';
import { FieldSet, fieldSetOf, fieldsV1Of, formatFieldPath } from './field-set.js';
import { applyWithManagedFields, recordUpdate } from './managers.js';

const schema = kindSchema('apps', 'v1', 'Deployment') as ObjectSchema;
const write = { schema, apiVersion: 'apps/v1', subresource: '', hasStatus: true, now: '2026-01-01T00:00:00Z' };
const applyWrite = { ...write, kind: 'Deployment', group: 'apps', name: 'web' };
const merge = (live: KubeObject | undefined, config: KubeObject) => applyApplyPatch(live, config, schemaMergeKeys(schema, true));

function deployment(replicas: number, image = 'nginx:1.27', extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image, ...extra }] } },
    },
  } as KubeObject;
}

const managers = (object: KubeObject) => (object.metadata.managedFields ?? []).map((entry) => `${entry.manager}/${entry.operation}`);
const owned = (object: KubeObject, manager: string) =>
  FieldSet.fromJSON(object.metadata.managedFields?.find((entry) => entry.manager === manager)?.fieldsV1)
    .paths()
    .map(formatFieldPath);

describe('field sets', () => {
  it('key map lists by their list-map keys, hold atomic lists whole, and leave status out of main-resource writes', () => {
    const object = deployment(2, 'nginx', { args: ['-v'] });
    (object as unknown as { status: unknown }).status = { replicas: 2 };
    const set = fieldSetOf(schema, object);
    const paths = set.paths().map(formatFieldPath);
    expect(paths).toContain('.spec.template.spec.containers[name="web"]');
    expect(paths).toContain('.spec.template.spec.containers[name="web"].image');
    expect(paths).toContain('.spec.template.spec.containers[name="web"].args');
    expect(set.toJSON()).toMatchObject({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {} } } } } } });
  });
});

describe('fieldsV1Of', () => {
  it('builds the same FieldsV1 as the field set, straight from the value', () => {
    const object = deployment(2, 'nginx', { args: ['-v'], env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80, protocol: 'TCP' }] });
    (object.metadata as { finalizers?: string[] }).finalizers = ['x'];
    expect(fieldsV1Of(schema, object)).toEqual(fieldSetOf(schema, object).toJSON());
    expect(fieldsV1Of(undefined, { data: { a: '1' }, list: [1] })).toEqual(fieldSetOf(undefined, { data: { a: '1' }, list: [1] }).toJSON());
  });
});

describe('recordUpdate', () => {
  it('gives a creator every field, and moves changed fields to the next writer', () => {
    const created = deployment(2);
    recordUpdate(created, undefined, 'kubectl-create', write);
    expect(managers(created)).toEqual(['kubectl-create/Update']);
    expect(owned(created, 'kubectl-create')).toEqual(expect.arrayContaining(['.spec.replicas', '.metadata.labels.app']));

    const scaled = structuredClone(created);
    (scaled.spec as { replicas: number }).replicas = 5;
    recordUpdate(scaled, created, 'kubectl-scale', write);
    expect(managers(scaled)).toEqual(['kubectl-create/Update', 'kubectl-scale/Update']);
    expect(owned(scaled, 'kubectl-scale')).toEqual(['.spec.replicas']);
    expect(owned(scaled, 'kubectl-create')).not.toContain('.spec.replicas');
  });

  it('writes nothing new for a write that changes nothing, and takes managedFields a client sets', () => {
    const created = deployment(2);
    recordUpdate(created, undefined, 'a', write);
    const same = structuredClone(created);
    recordUpdate(same, created, 'b', write);
    expect(same.metadata.managedFields).toEqual(created.metadata.managedFields);
    const cleared = structuredClone(created);
    cleared.metadata.managedFields = [];
    recordUpdate(cleared, created, 'b', write);
    expect(cleared.metadata.managedFields).toBeUndefined();
  });
});

describe('applyWithManagedFields', () => {
  it('refuses to change another manager’s field (409 naming manager and field), and takes it with force', () => {
    const live = applyWithManagedFields(undefined, deployment(2), 'alice', false, applyWrite, merge);
    expect(managers(live)).toEqual(['alice/Apply']);
    let error: unknown;
    try {
      applyWithManagedFields(live, deployment(3), 'bob', false, applyWrite, merge);
    } catch (err) {
      error = err;
    }
    expect((error as { status: number }).status).toBe(409);
    const status = (error as { toStatus(): { message: string; details: { causes: unknown[] } } }).toStatus();
    expect(status.message).toBe('Apply failed with 1 conflict: conflict with "alice" using apps/v1: .spec.replicas');
    expect(status.details.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "alice" using apps/v1', field: '.spec.replicas' }]);

    const forced = applyWithManagedFields(live, deployment(3), 'bob', true, applyWrite, merge);
    expect((forced.spec as { replicas: number }).replicas).toBe(3);
    expect(owned(forced, 'bob')).toContain('.spec.replicas');
    expect(owned(forced, 'alice')).not.toContain('.spec.replicas');
  });

  it('shares fields applied with the same value, and removes fields a manager stops applying', () => {
    const live = applyWithManagedFields(undefined, deployment(2, 'nginx', { command: ['run'] }), 'alice', false, applyWrite, merge);
    const shared = applyWithManagedFields(live, deployment(2, 'nginx', { command: ['run'] }), 'bob', false, applyWrite, merge);
    expect(owned(shared, 'bob')).toContain('.spec.replicas');
    expect(owned(shared, 'alice')).toContain('.spec.replicas');
    // alice drops command; bob still applies it, so it stays.
    const kept = applyWithManagedFields(shared, deployment(2, 'nginx'), 'alice', false, applyWrite, merge);
    expect((kept.spec as { template: { spec: { containers: { command?: string[] }[] } } }).template.spec.containers[0]!.command).toEqual(['run']);
    // bob drops it too: now it goes.
    const gone = applyWithManagedFields(kept, deployment(2, 'nginx'), 'bob', false, applyWrite, merge);
    expect((gone.spec as { template: { spec: { containers: { command?: string[] }[] } } }).template.spec.containers[0]!.command).toBeUndefined();
  });

  it('lets conflicts the caller allows through (kubectl’s client-side apply upgrade)', () => {
    const live = deployment(2);
    recordUpdate(live, undefined, 'kubectl-client-side-apply', write);
    const allowed = fieldSetOf(schema, deployment(2));
    const upgraded = applyWithManagedFields(live, deployment(4), 'kubectl', false, applyWrite, merge, allowed);
    expect((upgraded.spec as { replicas: number }).replicas).toBe(4);
    expect(owned(upgraded, 'kubectl')).toContain('.spec.replicas');
  });
});

describe('field sets of many fields', () => {
  const configMap = kindSchema('', 'v1', 'ConfigMap') as ObjectSchema;
  const wide = (count: number, value = 'v') => {
    const data: Record<string, string> = {};
    for (let i = 0; i < count; i++) data[`k${i}`] = value;
    return { data };
  };

  it('lists the paths of 130,000 fields (a list too long to spread into arguments)', () => {
    const set = fieldSetOf(configMap, wide(130_000));
    const paths = set.paths();
    expect(paths).toHaveLength(130_000);
    expect(paths[0]).toEqual(['f:data', 'f:k0']);
    expect(paths[129_999]).toEqual(['f:data', 'f:k129999']);
    expect(set.leafPaths()).toHaveLength(130_000);
    expect(FieldSet.fromJSON(set.toJSON()).paths()).toEqual(paths);
  });

  it('removes, subtracts and adds sets as per-path operations would', () => {
    // A fixed pseudo-random mix of nested members, some owned at several levels.
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const randomPaths = (count: number) =>
      Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => `f:${Math.floor(random() * 4)}`));
    for (let round = 0; round < 50; round++) {
      const a = randomPaths(12);
      const b = randomPaths(12);
      const build = (paths: string[][]) => {
        const set = new FieldSet();
        for (const path of paths) set.add(path);
        return set;
      };
      const expected = build(a);
      for (const path of b) if (expected.has(path)) expected.remove(path);
      const removed = build(a);
      expect(removed.removeAll(build(b))).toBe(a.some((path) => build(b).has(path)));
      expect(removed.toJSON()).toEqual(expected.toJSON());
      expect(build(a).difference(build(b)).toJSON()).toEqual(expected.toJSON());
      const union = build(a);
      union.addAll(build(b));
      expect(union.toJSON()).toEqual(build([...a, ...b]).toJSON());
    }
  });

  it('records a write of 130,000 changed fields for its manager', () => {
    const cmWrite = { schema: configMap, apiVersion: 'v1', subresource: '', hasStatus: false, now: write.now };
    const old = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'many' }, data: { a: '1' } } as KubeObject;
    recordUpdate(old, undefined, 'creator', cmWrite);
    const next = { ...structuredClone(old), ...wide(130_000) } as KubeObject;
    recordUpdate(next, old, 'kubectl', cmWrite);
    expect(managers(next)).toEqual(['kubectl/Update']);
    expect(owned(next, 'kubectl')).toHaveLength(130_000);
  });
});

describe('bounds on managedFields', () => {
  const configMap = kindSchema('', 'v1', 'ConfigMap') as ObjectSchema;
  const cmWrite = { schema: configMap, apiVersion: 'v1', subresource: '', hasStatus: false, now: '2026-01-01T00:00:00Z' };
  const configMapOf = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data }) as KubeObject;
  const entry = (manager: string, operation: string, field: string, seconds: number) => ({
    manager,
    operation,
    apiVersion: 'v1',
    time: new Date(Date.UTC(2025, 0, 1) + seconds * 1000).toISOString().replace('.000', ''),
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:data': { [`f:${field}`]: {} } },
  });

  it('keeps 10 Update entries of 19,000 sent: the oldest merged into ancient-changes, Apply entries untouched', () => {
    const old = configMapOf({ a: '1' });
    recordUpdate(old, undefined, 'creator', cmWrite);
    const next = configMapOf({ a: '2' });
    next.metadata.managedFields = [
      ...Array.from({ length: 19_000 }, (_, i) => entry(`m${i}`, 'Update', `k${i}`, i)),
      entry('applier', 'Apply', 'applied', 0),
    ] as KubeObject['metadata']['managedFields'];
    recordUpdate(next, old, 'writer', cmWrite);
    const kept = next.metadata.managedFields!;
    expect(kept.filter((e) => e.operation === 'Update').map((e) => e.manager)).toEqual([
      'ancient-changes',
      ...Array.from({ length: 8 }, (_, i) => `m${18_992 + i}`),
      'writer',
    ]);
    expect(kept.find((e) => e.manager === 'applier')).toMatchObject({ operation: 'Apply' });
    const ancient = kept.find((e) => e.manager === 'ancient-changes')!;
    // m0's place and version, the union of m0…m18991, and the time of the newest entry merged.
    expect(ancient).toMatchObject({ operation: 'Update', apiVersion: 'v1', time: entry('', '', '', 18_991).time });
    expect(Object.keys((ancient.fieldsV1 as { 'f:data': object })['f:data'])).toHaveLength(18_992);
  });

  it('ignores sent managedFields Kubernetes could not decode, keeping the stored ones', () => {
    const old = configMapOf({ a: '1' });
    recordUpdate(old, undefined, 'creator', cmWrite);
    for (const bad of [
      [{ ...entry('x', 'Bogus', 'a', 0) }],
      [{ ...entry('x', 'Update', 'a', 0), fieldsType: undefined }],
      [{ ...entry('x', 'Update', 'a', 0), apiVersion: '' }],
      [{ ...entry('x', 'Update', 'a', 0), fieldsV1: 'text' }],
      'not a list',
    ]) {
      const next = configMapOf({ a: '1', b: '2' });
      next.metadata.managedFields = bad as unknown as KubeObject['metadata']['managedFields'];
      recordUpdate(next, old, 'writer', cmWrite);
      expect(managers(next)).toEqual(['creator/Update', 'writer/Update']);
    }
  });
});

describe('server-side apply of long lists', () => {
  const containers = (count: number, image: string) => Array.from({ length: count }, (_, i) => ({ name: `c${i}`, image }));
  const withContainers = (list: { name: string; image: string }[]) => {
    const object = deployment(2);
    (object.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers = list;
    return object;
  };
  const containersOf = (object: KubeObject) =>
    (object.spec as { template: { spec: { containers: { name: string; image: string }[] } } }).template.spec.containers;

  it('removes the 39,999 containers a manager stops applying, and keeps what others hold', () => {
    const applied = applyWithManagedFields(undefined, withContainers(containers(40_000, 'a')), 'alice', false, applyWrite, merge);
    expect(containersOf(applied)).toHaveLength(40_000);
    const shared = applyWithManagedFields(applied, withContainers([{ name: 'c7', image: 'a' }]), 'bob', false, applyWrite, merge);
    const shrunk = applyWithManagedFields(shared, withContainers([{ name: 'c39999', image: 'b' }]), 'alice', true, applyWrite, merge);
    expect(containersOf(shrunk)).toEqual([
      { name: 'c7', image: 'a' },
      { name: 'c39999', image: 'b' },
    ]);
  });

  it('reports 40,000 conflicts in the order the configuration names them, then by manager', () => {
    const live = applyWithManagedFields(undefined, withContainers(containers(40_000, 'a')), 'alice', false, applyWrite, merge);
    const both = applyWithManagedFields(live, withContainers([{ name: 'c3', image: 'a' }]), 'bob', false, applyWrite, merge);
    let error: unknown;
    try {
      applyWithManagedFields(both, withContainers(containers(40_000, 'b')), 'carol', false, applyWrite, merge);
    } catch (err) {
      error = err;
    }
    const causes = (error as { toStatus(): { details: { causes: { field: string; message: string }[] } } }).toStatus().details.causes;
    expect(causes).toHaveLength(40_001);
    expect(causes.slice(0, 5).map((cause) => `${cause.field} ${cause.message}`)).toEqual([
      '.spec.template.spec.containers[name="c0"].image conflict with "alice" using apps/v1',
      '.spec.template.spec.containers[name="c1"].image conflict with "alice" using apps/v1',
      '.spec.template.spec.containers[name="c2"].image conflict with "alice" using apps/v1',
      '.spec.template.spec.containers[name="c3"].image conflict with "alice" using apps/v1',
      '.spec.template.spec.containers[name="c3"].image conflict with "bob" using apps/v1',
    ]);
  });
});
