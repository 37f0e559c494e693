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
