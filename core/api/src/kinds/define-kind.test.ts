import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../types.js';
import { AGE_COLUMN, defineKind } from './define-kind.js';
import { readJsonPath, writeJsonPath } from './json-path.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');

describe('defineKind', () => {
  const kind = defineKind({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    resource: 'deployments',
    namespaced: true,
    subresources: ['status'],
    columns: [
      { name: 'Replicas', jsonPath: '.spec.replicas', type: 'integer' },
      { name: 'Images', jsonPath: '.spec.template.spec.containers[*].image' },
      { name: 'Paused', jsonPath: '.spec.paused', type: 'boolean' },
      AGE_COLUMN,
    ],
  });

  it('derives names, schema, status handling and a table from the declaration and the API facts', () => {
    expect(kind).toMatchObject({ listKind: 'DeploymentList', singular: 'deployment', hasStatus: true });
    expect(kind.schema?.gvk).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(kind.table!.columns.map((column) => column.name)).toEqual(['Name', 'Replicas', 'Images', 'Paused', 'Age']);
    const object = {
      metadata: { name: 'web', creationTimestamp: '2024-05-01T11:00:00Z' },
      spec: { template: { spec: { containers: [{ image: 'a' }, { image: 'b' }] } } },
    } as unknown as KubeObject;
    // Unset fields print Go's zero values.
    expect(kind.table!.cells(object, NOW)).toEqual(['web', 0, 'a,b', false, '60m']);
    const created = { metadata: { name: 'web' }, status: { replicas: 3 } } as KubeObject;
    kind.prepareForCreate!(created);
    expect(created.status).toEqual({});
  });

  it('checks names, enums and required fields generically, and decodes with the schema', () => {
    const bad = { metadata: { name: 'Bad_Name', namespace: 'default' }, spec: { strategy: { type: 'Sometimes' } } } as unknown as KubeObject;
    const fields = kind.validate!(bad).map((cause) => cause.field);
    expect(fields).toEqual(expect.arrayContaining(['metadata.name', 'spec.strategy.type']));
    expect(kind.decode!({ spec: { replicas: 'two' } }, true).errors[0]?.field).toBe('spec.replicas');
  });

  it('refuses a declaration it cannot serve, naming the kind and the column', () => {
    expect(() => defineKind({ group: 'example.com', version: 'v1', kind: 'Widget', resource: 'widgets', namespaced: true })).toThrow(
      'defineKind: upstream defines no example.com/v1 Widget; give its schema',
    );
    expect(() =>
      defineKind({
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
        resource: 'deployments',
        namespaced: true,
        columns: [{ name: 'Bad', jsonPath: 'spec..x' }],
      }),
    ).toThrow(/defineKind Deployment: column "Bad": unsupported JSON path "spec\.\.x"/);
    expect(() =>
      defineKind({ group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true, columns: [{ name: 'Empty' }] }),
    ).toThrow('defineKind Deployment: column "Empty" needs a jsonPath or a cell function');
  });
});

describe('column JSON paths', () => {
  const object = { metadata: { labels: { 'app.kubernetes.io/name': 'web' } }, spec: { ports: [{ port: 80 }, { port: 443 }] } };
  it('read fields, indexes, quoted keys and every item, and write plain fields', () => {
    expect(readJsonPath(object, ".metadata.labels['app.kubernetes.io/name']")).toEqual(['web']);
    expect(readJsonPath(object, '.spec.ports[1].port')).toEqual([443]);
    expect(readJsonPath(object, '{.spec.ports[*].port}')).toEqual([80, 443]);
    expect(readJsonPath(object, '.spec.missing.deeper')).toEqual([]);
    const target: Record<string, unknown> = {};
    writeJsonPath(target, '.spec.replicas', 3);
    expect(target).toEqual({ spec: { replicas: 3 } });
    expect(() => writeJsonPath(target, '.spec.ports[0]', 1)).toThrow('only .field steps can be written');
  });

  it('filter list items as kubectl and CRD printer columns do, and count indexes from the end', () => {
    const status = {
      status: {
        conditions: [
          { type: 'Issuing', status: 'False', observedGeneration: 1 },
          { type: 'Ready', status: 'True', observedGeneration: 3, reason: 'Ok' },
        ],
      },
    };
    expect(readJsonPath(status, '.status.conditions[?(@.type=="Ready")].status')).toEqual(['True']);
    expect(readJsonPath(status, ".status.conditions[?(@.type == 'Ready')].reason")).toEqual(['Ok']);
    expect(readJsonPath(status, '.status.conditions[?(@.status!="True")].type')).toEqual(['Issuing']);
    expect(readJsonPath(status, '.status.conditions[?(@.observedGeneration>=2)].type')).toEqual(['Ready']);
    expect(readJsonPath(status, '.status.conditions[?(@.reason)].type')).toEqual(['Ready']);
    expect(readJsonPath(status, '.status.conditions[?(@.type=="Missing")].status')).toEqual([]);
    expect(readJsonPath(status, '.status.conditions[-1].type')).toEqual(['Ready']);
    expect(() => readJsonPath(status, '.status.conditions[?(@.type=~"R")]')).toThrow('unsupported JSON path');
  });
});
