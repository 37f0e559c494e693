import type { Namespace } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { defaultNamespace, validateNamespace } from './namespaces.js';

const messages = (causes: { field?: string; message?: string }[]) => causes.map((c) => `${c.field}: ${c.message}`);

describe('validateNamespace', () => {
  it('requires a DNS label name and no namespace', () => {
    expect(validateNamespace({ metadata: { name: 'team-a' }, spec: { finalizers: ['kubernetes'] } })).toEqual([]);
    expect(messages(validateNamespace({ metadata: { name: 'team.a', namespace: 'x' } }))).toEqual([
      `metadata.name: Invalid value: "team.a": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
  });

  it('accepts only standard or qualified finalizers', () => {
    const namespace: Namespace = { metadata: { name: 'a' }, spec: { finalizers: ['cleanup', 'example.com/cleanup'] } };
    expect(messages(validateNamespace(namespace))).toEqual([
      'spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });
});

describe('defaultNamespace', () => {
  it('labels a namespace with its name and makes it Active', () => {
    const namespace: Namespace = { metadata: { name: 'team-a', labels: { owner: 'me' } } };
    defaultNamespace(namespace);
    expect(namespace.metadata.labels).toEqual({ owner: 'me', 'kubernetes.io/metadata.name': 'team-a' });
    expect(namespace.status).toEqual({ phase: 'Active' });
  });
});
