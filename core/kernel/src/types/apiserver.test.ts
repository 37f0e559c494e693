import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Deployment, KubeObject, Pod } from '@skiff/api';
import { isAdmissionFor, type AdmissionRequest } from './apiserver.js';

const request = (group: string, resource: string, subresource = ''): AdmissionRequest => ({
  operation: 'CREATE',
  kind: { group, version: 'v1', kind: 'X' },
  resource: { group, version: 'v1', resource },
  subresource,
  namespace: 'default',
  name: 'x',
  object: { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } } as KubeObject,
  user: { username: 'u', groups: [] },
  dryRun: false,
  get: async () => undefined,
});

describe('isAdmissionFor', () => {
  it('matches a resource by plural and group, and not its subresources', () => {
    expect(isAdmissionFor(request('', 'pods'), 'pods')).toBe(true);
    expect(isAdmissionFor(request('apps', 'deployments'), 'deployments.apps')).toBe(true);
    expect(isAdmissionFor(request('', 'deployments'), 'deployments.apps')).toBe(false);
    expect(isAdmissionFor(request('apps', 'deployments'), 'pods')).toBe(false);
    expect(isAdmissionFor(request('', 'pods', 'status'), 'pods')).toBe(false);
  });

  it('narrows the object to the resource type', () => {
    const pods = request('', 'pods');
    if (isAdmissionFor(pods, 'pods')) expectTypeOf(pods.object).toEqualTypeOf<Pod | undefined>();
    const deployments = request('apps', 'deployments');
    if (isAdmissionFor(deployments, 'deployments.apps')) expectTypeOf(deployments.oldObject).toEqualTypeOf<Deployment | undefined>();
    expect(pods.object?.metadata.name).toBe('x');
  });
});
