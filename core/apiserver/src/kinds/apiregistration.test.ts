import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { APIREGISTRATION_KINDS } from './apiregistration.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(APIREGISTRATION_KINDS);

describe('API services', () => {
  const body = {
    metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: {
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      service: { namespace: 'kube-system', name: 'metrics-server' },
      groupPriorityMinimum: 100,
      versionPriority: 100,
      insecureSkipTLSVerify: true,
    },
  };

  it('defaults the service port and prints Service and Available', () => {
    const apiService = create('apiservices', body) as KubeObject & { spec: { service: object } };
    expect(apiService.spec.service).toEqual({ namespace: 'kube-system', name: 'metrics-server', port: 443 });
    expect(cells('apiservices', apiService)).toEqual(['v1beta1.metrics.k8s.io', 'kube-system/metrics-server', 'Unknown', '3h5m']);
    apiService.status = { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] };
    expect(cells('apiservices', apiService)[2]).toBe('False (MissingEndpoints)');
    const local = create('apiservices', {
      metadata: { name: 'v1.apps' },
      spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
    });
    local.status = { conditions: [{ type: 'Available', status: 'True', reason: 'Local' }] };
    expect(cells('apiservices', local)).toEqual(['v1.apps', 'Local', 'True', '3h5m']);
  });

  it('names the service <version>.<group>', () => {
    expect(fields('apiservices', { ...body, metadata: { name: 'metrics' } })).toEqual([
      'metadata.name: Invalid value: "metrics": must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"',
    ]);
    expect(fields('apiservices', { metadata: { name: 'v2.' }, spec: { version: 'v2', groupPriorityMinimum: 1, versionPriority: 1 } })).toEqual([
      'spec.group: Required value: only v1 may have an empty group and it better be legacy kube',
    ]);
  });
});
