import { describe, expect, it } from 'vitest';
import { ExportFormatError, headerLine, KindCounts, objectLine, objectToImport, parseHeader, parseObjectLine, type ExportHeader } from './store-format.js';

const HEADER: ExportHeader = {
  kind: 'SkiffStoreExport',
  version: 1,
  revision: 42,
  objects: 2,
  store: '@skiff/store',
  preset: 'standard',
  exportedAt: '2025-01-01T00:00:00.000Z',
  skiffVersion: '0.1.0',
};

describe('the export header', () => {
  it('reads back what headerLine writes', () => {
    expect(parseHeader('f', headerLine(HEADER))).toEqual(HEADER);
    expect(headerLine(HEADER)).toMatch(/^\{"kind":"SkiffStoreExport","version":1,"revision":42,/);
  });

  it('refuses an empty file, another file, another version and a header without counts, on line 1', () => {
    expect(() => parseHeader('f', undefined)).toThrow('f:1: the file is empty');
    expect(() => parseHeader('f', '{"apiVersion":"v1","kind":"List"}')).toThrow('f:1: not a skiff store export');
    expect(() => parseHeader('f', '[1,2]')).toThrow('f:1: not a skiff store export');
    expect(() => parseHeader('f', '{"kind":"SkiffStoreExport"')).toThrow(/^f:1: not JSON/);
    expect(() => parseHeader('f', headerLine({ ...HEADER, version: 2 as 1 }))).toThrow('f:1: export format version 2 is not one this skiff reads (1)');
    expect(() => parseHeader('f', headerLine({ ...HEADER, objects: -1 }))).toThrow(`f:1: the header's "objects" must be a whole number (got -1)`);
    expect(() => parseHeader('f', '')).toThrow(ExportFormatError);
  });
});

describe('object lines', () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default', uid: 'u-1', resourceVersion: '17' }, data: { a: 'YQ==' } };

  it('reads back what objectLine writes', () => {
    expect(parseObjectLine('f', 2, objectLine('/registry/secrets/default/s', secret))).toEqual({ key: '/registry/secrets/default/s', object: secret });
  });

  it('names the line of each thing wrong', () => {
    expect(() => parseObjectLine('f', 7, '')).toThrow('f:7: empty line');
    expect(() => parseObjectLine('f', 7, '{"key":')).toThrow(/^f:7: not JSON/);
    expect(() => parseObjectLine('f', 7, '"text"')).toThrow('f:7: expected {"key":…,"object":…}');
    expect(() => parseObjectLine('f', 7, JSON.stringify({ key: '/other/x', object: secret }))).toThrow(
      'f:7: "key" must be a store key under /registry/ (got "/other/x")',
    );
    expect(() => parseObjectLine('f', 7, JSON.stringify({ key: '/registry/', object: secret }))).toThrow('f:7: "key" must be a store key');
    expect(() => parseObjectLine('f', 7, JSON.stringify({ key: '/registry/x/y', object: { kind: 'X' } }))).toThrow(
      'f:7: "object" at /registry/x/y must be a Kubernetes object with metadata',
    );
    expect(() => parseObjectLine('f', 7, JSON.stringify({ key: '/registry/x/y', object: secret, revision: 3 }))).toThrow('f:7: unexpected field "revision"');
    try {
      parseObjectLine('exports/a.jsonl', 9, '}');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ExportFormatError);
      expect(err).toMatchObject({ file: 'exports/a.jsonl', line: 9 });
    }
  });

  it('imports everything but the old resourceVersion', () => {
    const owned = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'web-1',
        namespace: 'default',
        uid: 'u-2',
        resourceVersion: '99',
        generation: 3,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-3', controller: true }],
      },
      spec: { replicas: 2 },
      status: { readyReplicas: 2 },
    };
    const { resourceVersion: _dropped, ...metadata } = owned.metadata;
    expect(objectToImport(owned)).toEqual({ ...owned, metadata });
    expect(owned.metadata.resourceVersion).toBe('99');
  });
});

describe('KindCounts', () => {
  it('counts by kind, most first, and by the key when an object has none', () => {
    const counts = new KindCounts();
    counts.add('/registry/configmaps/a/x', { kind: 'ConfigMap', metadata: {} });
    counts.add('/registry/configmaps/a/y', { kind: 'ConfigMap', metadata: {} });
    counts.add('/registry/apps/deployments/a/z', { kind: 'Deployment', metadata: {} });
    counts.add('/registry/ranges/serviceips', { metadata: {} } as never);
    expect(counts.total).toBe(4);
    expect(counts.toString()).toBe('2 ConfigMap, 1 Deployment, 1 ranges');
  });
});
