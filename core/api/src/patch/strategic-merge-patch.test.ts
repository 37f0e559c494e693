import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import type { MergeKeyTable } from './merge-keys.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

// Patched objects are inspected field by field.
type Json = any;

function deployment(): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'default',
      labels: { app: 'web' },
      finalizers: ['example.com/a', 'example.com/b'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'Thing', name: 'owner', uid: 'u-1' }],
    },
    spec: {
      replicas: 2,
      paused: true,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.24',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              ports: [{ containerPort: 80 }, { containerPort: 8080 }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
            { name: 'sidecar', image: 'busybox', args: ['sleep', '3600'] },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
          tolerations: [{ key: 'a', operator: 'Exists' }],
        },
      },
    },
    status: {
      conditions: [
        { type: 'Available', status: 'True' },
        { type: 'Progressing', status: 'True' },
      ],
    },
  };
}

function badRequest(run: () => unknown): ApiError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return err as ApiError;
  }
  throw new Error('expected a BadRequest ApiError');
}

const names = (list: Json[]) => list.map((item) => item.name);

describe('applyStrategicMergePatch with the bodies kubectl sends', () => {
  it('set image: merges the container by name and keeps everything else', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: {
        template: {
          spec: { '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }], containers: [{ image: 'nginx:1.25', name: 'web' }] },
        },
      },
    });
    const containers = patched.spec.template.spec.containers;
    expect(names(containers)).toEqual(['web', 'sidecar']);
    expect(containers[0]).toEqual({ ...deployment().spec.template.spec.containers[0], image: 'nginx:1.25' });
    expect(containers[1]).toEqual(deployment().spec.template.spec.containers[1]);
    expect(JSON.stringify(patched)).not.toContain('$setElementOrder');
  });

  it('set image: the exact single-container body from the probe', () => {
    const target = { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.24', ports: [{ containerPort: 80 }] }] } } } };
    const body = JSON.parse(
      '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.25","name":"nginx"}]}}}}',
    );
    expect(applyStrategicMergePatch(target, body)).toEqual({
      spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] } } },
    });
  });

  it('rollout resume: null deletes the field', () => {
    const patched = applyStrategicMergePatch(deployment(), JSON.parse('{"spec":{"paused":null}}'));
    expect('paused' in patched.spec).toBe(false);
    expect(patched.spec.replicas).toBe(2);
  });

  it('rollout restart: adds a template annotation', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-05-01T12:00:00Z' } } } },
    });
    expect(patched.spec.template.metadata).toEqual({
      labels: { app: 'web' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-05-01T12:00:00Z' },
    });
  });

  it('cordon: sets spec.unschedulable on a node', () => {
    const node = { metadata: { name: 'n1' }, spec: { podCIDR: '10.0.0.0/24' } };
    expect(applyStrategicMergePatch(node, { spec: { unschedulable: true } })).toEqual({
      metadata: { name: 'n1' },
      spec: { podCIDR: '10.0.0.0/24', unschedulable: true },
    });
  });

  it('set env: adds a variable in the order kubectl asks for', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }],
            containers: [{ '$setElementOrder/env': [{ name: 'C' }, { name: 'A' }, { name: 'B' }], env: [{ name: 'C', value: '3' }], name: 'web' }],
          },
        },
      },
    });
    expect(patched.spec.template.spec.containers[0].env).toEqual([
      { name: 'C', value: '3' },
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it('set env A-: deletes a variable with a $patch: delete element', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }],
            containers: [{ '$setElementOrder/env': [{ name: 'B' }], env: [{ $patch: 'delete', name: 'A' }], name: 'web' }],
          },
        },
      },
    });
    expect(patched.spec.template.spec.containers[0].env).toEqual([{ name: 'B', value: '2' }]);
  });

  it('client-side apply: drops a port, changes replicas, records last-applied', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"Deployment"}\n' } },
      spec: {
        replicas: 3,
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }],
            containers: [{ '$setElementOrder/ports': [{ containerPort: 80 }], name: 'web', ports: [{ $patch: 'delete', containerPort: 8080 }] }],
          },
        },
      },
    });
    expect(patched.metadata.annotations).toEqual({ 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"Deployment"}\n' });
    expect(patched.spec.replicas).toBe(3);
    expect(patched.spec.template.spec.containers[0].ports).toEqual([{ containerPort: 80 }]);
    expect(patched.spec.template.spec.containers[0].volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }]);
  });

  it('client-side apply: switches the strategy type and clears rollingUpdate with $retainKeys', () => {
    const patched = applyStrategicMergePatch(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    expect(patched.spec.strategy).toEqual({ type: 'Recreate' });
  });
});

describe('applyStrategicMergePatch: lists', () => {
  it('merges lists of objects by their merge key and places new items as Kubernetes does', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: { template: { spec: { containers: [{ name: 'log', image: 'fluentd' }], volumes: [{ name: 'logs', emptyDir: {} }] } } },
    });
    // Without $setElementOrder, items the live list lacks go before the live items.
    expect(names(patched.spec.template.spec.containers)).toEqual(['log', 'web', 'sidecar']);
    expect(names(patched.spec.template.spec.volumes)).toEqual(['logs', 'data']);
  });

  it('orders by the patch list, weaving in the items it does not name by their live order', () => {
    const target = { metadata: { finalizers: ['a', 'b', 'c'] } };
    expect(applyStrategicMergePatch(target, { metadata: { finalizers: ['d', 'b'] } }).metadata.finalizers).toEqual(['d', 'a', 'b', 'c']);
    expect(applyStrategicMergePatch(target, { metadata: { finalizers: ['c', 'a'] } }).metadata.finalizers).toEqual(['b', 'c', 'a']);
  });

  it('merges primitive sets (finalizers) without duplicates, and deletes from them', () => {
    const patched = applyStrategicMergePatch(deployment(), { metadata: { finalizers: ['example.com/b', 'example.com/c'] } });
    expect(patched.metadata.finalizers).toEqual(['example.com/a', 'example.com/b', 'example.com/c']);

    const removed = applyStrategicMergePatch(deployment(), {
      metadata: {
        '$deleteFromPrimitiveList/finalizers': ['example.com/a'],
        '$setElementOrder/finalizers': ['example.com/b', 'example.com/c'],
        finalizers: ['example.com/c'],
      },
    });
    expect(removed.metadata.finalizers).toEqual(['example.com/b', 'example.com/c']);
    expect(Object.keys(removed.metadata)).not.toContain('$deleteFromPrimitiveList/finalizers');
  });

  it('reorders a list with $setElementOrder alone', () => {
    const containers = applyStrategicMergePatch(deployment(), {
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'web' }] } } },
    }).spec.template.spec.containers;
    expect(names(containers)).toEqual(['sidecar', 'web']);
    expect(containers[1]).toEqual(deployment().spec.template.spec.containers[0]);
    const finalizers = applyStrategicMergePatch(deployment(), { metadata: { '$setElementOrder/finalizers': ['example.com/b', 'example.com/a'] } }).metadata
      .finalizers;
    expect(finalizers).toEqual(['example.com/b', 'example.com/a']);
  });

  it('merges owner references by uid, conditions by type, service ports by port', () => {
    const ownerRefs = applyStrategicMergePatch(deployment(), { metadata: { ownerReferences: [{ uid: 'u-1', controller: true }] } }).metadata.ownerReferences;
    expect(ownerRefs).toEqual([{ apiVersion: 'v1', kind: 'Thing', name: 'owner', uid: 'u-1', controller: true }]);

    const conditions = applyStrategicMergePatch(deployment(), { status: { conditions: [{ type: 'Progressing', status: 'False', reason: 'Paused' }] } }).status
      .conditions;
    expect(conditions).toEqual([
      { type: 'Available', status: 'True' },
      { type: 'Progressing', status: 'False', reason: 'Paused' },
    ]);

    const service = {
      spec: {
        ports: [
          { port: 80, targetPort: 8080 },
          { port: 443, targetPort: 8443 },
        ],
      },
    };
    expect(applyStrategicMergePatch(service, { spec: { ports: [{ port: 443, targetPort: 9443 }] } }).spec.ports).toEqual([
      { port: 80, targetPort: 8080 },
      { port: 443, targetPort: 9443 },
    ]);
  });

  it('replaces lists that have no merge strategy (tolerations, args)', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: {
        template: {
          spec: {
            tolerations: [{ key: 'b', operator: 'Exists' }],
            containers: [{ name: 'sidecar', args: ['sleep', '10'] }],
          },
        },
      },
    });
    expect(patched.spec.template.spec.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
    expect(patched.spec.template.spec.containers.find((c: Json) => c.name === 'sidecar').args).toEqual(['sleep', '10']);
  });

  it('replaces a whole merging list with a $patch: replace element', () => {
    const patched = applyStrategicMergePatch(deployment(), {
      spec: { template: { spec: { containers: [{ name: 'only', image: 'x', env: [{ name: 'X', value: null }] }, { $patch: 'replace' }] } } },
    });
    expect(patched.spec.template.spec.containers).toEqual([{ name: 'only', image: 'x', env: [{ name: 'X' }] }]);
  });

  it('handles directives in a list the target does not have yet', () => {
    const patched = applyStrategicMergePatch(
      { spec: {} },
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
          containers: [{ name: 'b', x: null }, { name: 'a' }, { $patch: 'delete', name: 'c' }],
        },
      },
    );
    expect(patched).toEqual({ spec: { containers: [{ name: 'b' }, { name: 'a' }] } });
  });

  it('takes the merge key from $setElementOrder for a list the table does not know', () => {
    const target = {
      spec: {
        widgets: [
          { id: 'w1', size: 1 },
          { id: 'w2', size: 2 },
        ],
      },
    };
    const patched = applyStrategicMergePatch(target, {
      spec: { '$setElementOrder/widgets': [{ id: 'w1' }, { id: 'w2' }], widgets: [{ id: 'w2', size: 3 }] },
    });
    expect(patched.spec.widgets).toEqual([
      { id: 'w1', size: 1 },
      { id: 'w2', size: 3 },
    ]);
    // Without the directive, an unknown list is replaced.
    expect(applyStrategicMergePatch(target, { spec: { widgets: [{ id: 'w2' }] } }).spec.widgets).toEqual([{ id: 'w2' }]);
  });

  it('uses a custom merge-key table', () => {
    const table: MergeKeyTable = { 'spec.widgets': { mergeKey: 'id' }, '*.tags': 'merge' };
    const target = { spec: { widgets: [{ id: 'w1', size: 1 }], nested: { tags: ['a'] } } };
    const patched = applyStrategicMergePatch(target, { spec: { widgets: [{ id: 'w2', size: 2 }], nested: { tags: ['b', 'a'] } } }, table);
    expect(patched.spec.widgets).toEqual([
      { id: 'w2', size: 2 },
      { id: 'w1', size: 1 },
    ]);
    expect(patched.spec.nested.tags).toEqual(['b', 'a']);
  });
});

describe('applyStrategicMergePatch: long lists', () => {
  // Each patch item finds its match by key in constant time; these lists took minutes when every item searched the list.
  it('merges 40,000 containers by name: existing ones updated in place, the rest added in patch order', () => {
    const target = deployment();
    const containers = Array.from({ length: 40_000 }, (_, i) => ({ name: i === 5 ? 'sidecar' : `c${i}`, image: 'new' }));
    const patched = applyStrategicMergePatch(target, { spec: { template: { spec: { containers } } } });
    const merged: Json[] = patched.spec.template.spec.containers;
    expect(merged).toHaveLength(40_001);
    // `web` is not in the patch: it goes before the first patched item that follows it in the live list (sidecar).
    expect(names(merged.slice(0, 7))).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'web', 'sidecar']);
    expect(merged[6]).toEqual({ name: 'sidecar', image: 'new', args: ['sleep', '3600'] });
    expect(merged[5].image).toBe('nginx:1.24');
    expect(merged[40_000]).toEqual({ name: 'c39999', image: 'new' });
  });

  it('deletes 20,000 elements by key and 20,000 values from a primitive list', () => {
    const target = {
      metadata: { finalizers: Array.from({ length: 30_000 }, (_, i) => `f${i}`) },
      spec: { volumes: Array.from({ length: 30_000 }, (_, i) => ({ name: `v${i}`, emptyDir: {} })) },
    };
    const patch = {
      metadata: { '$deleteFromPrimitiveList/finalizers': Array.from({ length: 20_000 }, (_, i) => `f${i * 1.5}`) },
      spec: { volumes: Array.from({ length: 20_000 }, (_, i) => ({ name: `v${i + 10_000}`, $patch: 'delete' })) },
    };
    const patched = applyStrategicMergePatch(target, patch);
    // Every f<multiple of 3> and f<…>.5 is asked for; only the whole numbers exist.
    expect(patched.metadata.finalizers).toHaveLength(30_000 - 10_000);
    expect(patched.metadata.finalizers.slice(0, 4)).toEqual(['f1', 'f2', 'f4', 'f5']);
    expect(names(patched.spec.volumes)).toEqual(Array.from({ length: 10_000 }, (_, i) => `v${i}`));
  });

  it('matches merge keys that are objects whatever the order of their members, and keeps numbers and strings apart', () => {
    const table: MergeKeyTable = { items: { mergeKey: 'id' } };
    const target = {
      items: [
        { id: { a: 1, b: 2 }, v: 'old' },
        { id: 1, v: 'number' },
      ],
    };
    const patched = applyStrategicMergePatch(
      target,
      {
        items: [
          { id: { b: 2, a: 1 }, v: 'new' },
          { id: '1', v: 'string' },
        ],
      },
      table,
    );
    expect(patched.items).toHaveLength(3);
    expect(patched.items).toContainEqual({ id: { a: 1, b: 2 }, v: 'new' });
    expect(patched.items).toContainEqual({ id: 1, v: 'number' });
    expect(patched.items).toContainEqual({ id: '1', v: 'string' });
  });
});

describe('applyStrategicMergePatch: maps and values', () => {
  it('deletes a map with $patch: delete, like null', () => {
    const patched = applyStrategicMergePatch(deployment(), { spec: { strategy: { rollingUpdate: { $patch: 'delete' } } } });
    expect(patched.spec.strategy).toEqual({ type: 'RollingUpdate' });
  });

  it('replaces a map with $patch: replace', () => {
    const patched = applyStrategicMergePatch(deployment(), { spec: { selector: { $patch: 'replace', matchLabels: { app: 'api' }, matchExpressions: null } } });
    expect(patched.spec.selector).toEqual({ matchLabels: { app: 'api' } });
  });

  it('accepts $patch: merge as the default', () => {
    const patched = applyStrategicMergePatch(deployment(), { metadata: { $patch: 'merge', labels: { tier: 'x' } } });
    expect(patched.metadata.labels).toEqual({ app: 'web', tier: 'x' });
  });

  it('drops nulls inside new values and replaces values of another type', () => {
    const patched = applyStrategicMergePatch({ a: { b: 1 }, c: [1] }, { a: 'text', c: { d: 1 }, e: { f: null, g: { h: null, i: 1 } } });
    expect(patched).toEqual({ a: 'text', c: { d: 1 }, e: { g: { i: 1 } } });
  });

  it('neither modifies nor shares its inputs', () => {
    const target = deployment();
    const patch = { spec: { template: { spec: { containers: [{ name: 'web', env: [{ name: 'Z', value: '9' }] }] } } } };
    const patchCopy = structuredClone(patch);
    const patched = applyStrategicMergePatch(target, patch);
    expect(target).toEqual(deployment());
    expect(patch).toEqual(patchCopy);
    patched.spec.template.spec.containers[1].args.push('x');
    patched.spec.template.spec.containers[0].env.push({ name: 'Q' });
    patched.metadata.labels.app = 'changed';
    expect(target).toEqual(deployment());
    expect(patch).toEqual(patchCopy);
  });
});

describe('applyStrategicMergePatch: errors', () => {
  it.each([
    ['a patch that is not an object', ['x'], 'invalid strategic merge patch: the patch must be a JSON object'],
    ['an unknown map directive', { spec: { $patch: 'explode' } }, 'invalid strategic merge patch: unknown $patch directive "explode" at spec'],
    [
      'an unknown list directive',
      { spec: { template: { spec: { containers: [{ $patch: 'explode' }] } } } },
      'invalid strategic merge patch: unknown $patch directive "explode" at spec.template.spec.containers',
    ],
    [
      'a list element without its merge key',
      { spec: { template: { spec: { containers: [{ image: 'x' }] } } } },
      'invalid strategic merge patch: every element of spec.template.spec.containers needs the merge key "name", got {"image":"x"}',
    ],
    [
      'a delete element without its merge key',
      { spec: { template: { spec: { containers: [{ $patch: 'delete' }] } } } },
      'invalid strategic merge patch: a $patch: delete element of spec.template.spec.containers lacks the merge key "name"',
    ],
    ['a delete element in a primitive list', { metadata: { finalizers: [{ $patch: 'delete' }] } }, '$patch: delete needs a merge key'],
    ['objects in a primitive set', { metadata: { finalizers: [{ a: 1 }] } }, 'merges as a set of primitive values, but holds objects or lists'],
    [
      'a $retainKeys that is not a list of names',
      { spec: { strategy: { $retainKeys: 'type' } } },
      '$retainKeys at spec.strategy must be a list of field names',
    ],
    [
      'a field missing from $retainKeys',
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: {} } } },
      '"rollingUpdate" is set at spec.strategy but missing from its $retainKeys',
    ],
    ['a $setElementOrder that is not a list', { metadata: { '$setElementOrder/finalizers': 'a' } }, '$setElementOrder/finalizers at metadata must be a list'],
    [
      'a $deleteFromPrimitiveList that is not a list',
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      '$deleteFromPrimitiveList/finalizers at metadata must be a list',
    ],
    [
      'a patch list out of step with $setElementOrder',
      {
        spec: {
          template: { spec: { '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }], containers: [{ name: 'sidecar' }, { name: 'web' }] } },
        },
      },
      'the order of the containers list at spec.template.spec does not match $setElementOrder/containers',
    ],
    [
      'a $setElementOrder element without the merge key',
      { spec: { template: { spec: { '$setElementOrder/containers': [{ image: 'x' }], containers: [{ name: 'web' }] } } } },
      'every element of $setElementOrder/containers at spec.template.spec needs the merge key "name"',
    ],
  ])('400 for %s', (_name, patch, message) => {
    expect(badRequest(() => applyStrategicMergePatch(deployment(), patch)).message).toContain(message);
  });
});
