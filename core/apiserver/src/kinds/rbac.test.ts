import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { RBAC_KINDS } from './rbac.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { CREATED, definition, create, fields, cells } = kindHarness(RBAC_KINDS);

describe('roles and cluster roles', () => {
  it('print Created At and accept path-segment names', () => {
    const role = create('roles', {
      metadata: { name: 'system:pod-reader', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    expect(definition('roles').table!.columns.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    expect(cells('roles', role)).toEqual(['system:pod-reader', CREATED]);
    expect(fields('roles', { metadata: { name: 'a/b', namespace: 'default' } })).toEqual(['metadata.name: Invalid value: "a/b": may not contain \'/\'']);
  });

  it('checks policy rules', () => {
    const role = (rules: unknown[]) => ({ metadata: { name: 'r', namespace: 'default' }, rules });
    expect(fields('roles', role([{ verbs: [], resources: ['pods'] }]))).toEqual([
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
    ]);
    expect(fields('roles', role([{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]))).toEqual([
      'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
    ]);
    expect(fields('clusterroles', { metadata: { name: 'health' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] })).toEqual([]);
    expect(fields('clusterroles', { metadata: { name: 'mixed' }, rules: [{ verbs: ['get'], resources: ['pods'], nonResourceURLs: ['/healthz'] }] })).toEqual([
      'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs',
    ]);
    expect(fields('clusterroles', { metadata: { name: 'agg' }, aggregationRule: { clusterRoleSelectors: [] } })).toEqual([
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ]);
  });
});

describe('role bindings and cluster role bindings', () => {
  const bindingBody = {
    metadata: { name: 'admins', namespace: 'dev' },
    roleRef: { kind: 'ClusterRole', name: 'admin' },
    subjects: [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'devs' },
      { kind: 'ServiceAccount', name: 'ci', namespace: 'dev' },
      { kind: 'User', name: 'bob' },
    ],
  };

  it('defaults API groups as upstream does and prints Role, Age and the subjects wide', () => {
    const binding = create('rolebindings', bindingBody) as KubeObject & { roleRef: object; subjects: object[] };
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' });
    expect(binding.subjects.map((s) => (s as { apiGroup: string }).apiGroup)).toEqual([
      'rbac.authorization.k8s.io',
      'rbac.authorization.k8s.io',
      '',
      'rbac.authorization.k8s.io',
    ]);
    expect(definition('rolebindings').table!.columns.map((c) => `${c.name}:${c.priority}`)).toEqual([
      'Name:0',
      'Role:0',
      'Age:0',
      'Users:1',
      'Groups:1',
      'ServiceAccounts:1',
    ]);
    expect(cells('rolebindings', binding)).toEqual(['admins', 'ClusterRole/admin', '3h5m', 'alice, bob', 'devs', 'dev/ci']);
  });

  it('checks the role reference and subjects', () => {
    expect(
      fields('rolebindings', {
        metadata: { name: 'b', namespace: 'dev' },
        roleRef: { kind: 'Pod', name: 'x', apiGroup: 'apps' },
        subjects: [{ kind: 'Robot', name: 'r' }],
      }),
    ).toEqual([
      'roleRef.apiGroup: Unsupported value: "apps": supported values: "rbac.authorization.k8s.io"',
      'roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"',
      'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ]);
    expect(fields('rolebindings', { metadata: { name: 'b', namespace: 'dev' } })).toEqual([
      'roleRef.apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
      'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
    ]);
    expect(
      fields('clusterrolebindings', {
        metadata: { name: 'b' },
        roleRef: { kind: 'Role', name: 'view' },
        subjects: [
          { kind: 'ServiceAccount', name: 'ci' },
          { kind: 'User', name: 'u', apiGroup: 'example.com' },
        ],
      }),
    ).toEqual([
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      'subjects[0].namespace: Required value',
      'subjects[1].apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
    ]);
  });

  it('prints ClusterRole/… for cluster role bindings and keeps roleRef immutable', () => {
    const old = create('clusterrolebindings', {
      metadata: { name: 'view-all' },
      roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'Group', name: 'all' }],
    });
    expect(cells('clusterrolebindings', old).slice(0, 3)).toEqual(['view-all', 'ClusterRole/view', '3h5m']);
    const update = { ...structuredClone(old), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' } };
    expect(fields('clusterrolebindings', update, old)).toEqual([
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    ]);
  });
});
