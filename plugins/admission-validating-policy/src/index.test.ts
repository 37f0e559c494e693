import { RESOURCES, type ConfigMap, type Deployment, type ValidatingAdmissionPolicy, type ValidatingAdmissionPolicyBinding } from '@skiff/api';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import { waitFor } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.js';

// The plugin in a whole cluster in this process, over HTTPS: the wiring of watches, params and the validate tap.
describe('in a whole cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [plugin] });
  });
  afterAll(() => cluster?.stop());

  const deployment = (name: string, replicas: number): Deployment => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    },
  });

  it('refuses what a bound policy denies, with its param read from a ConfigMap, and admits the rest', async () => {
    const { client } = cluster;
    await client.create<ConfigMap>(RESOURCES.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits' }, data: { max: '2' } }, 'default');
    await client.create<ValidatingAdmissionPolicy>(RESOURCES.validatingadmissionpolicies, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'max' },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
        validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', message: 'too many replicas' }],
      },
    });
    await client.create<ValidatingAdmissionPolicyBinding>(RESOURCES.validatingadmissionpolicybindings, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'max' },
      spec: { policyName: 'max', validationActions: ['Deny'], paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } },
    });
    let attempt = 0;
    await waitFor('the binding in force', () =>
      client.create(RESOURCES.deployments, deployment(`probe-${attempt++}`, 3), 'default').then(
        () => false,
        () => true,
      ),
    );
    await expect(client.create(RESOURCES.deployments, deployment('big', 3), 'default')).rejects.toThrow(
      `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max' with binding 'max' denied request: too many replicas`,
    );
    expect((await client.create<Deployment>(RESOURCES.deployments, deployment('small', 2), 'default')).metadata.uid).toBeTruthy();
  });

  it('hands the policy every param a selector finds, each evaluated on its own', async () => {
    const { client } = cluster;
    const limit = (name: string, max: string) =>
      client.create<ConfigMap>(
        RESOURCES.configmaps,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { 'limits.example.com/replicas': 'true' } }, data: { max } },
        'default',
      );
    await limit('loose', '10');
    await limit('strict', '4');
    await client.delete(RESOURCES.validatingadmissionpolicybindings, 'max');
    await client.create<ValidatingAdmissionPolicyBinding>(RESOURCES.validatingadmissionpolicybindings, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'max-by-label' },
      spec: {
        policyName: 'max',
        validationActions: ['Deny'],
        paramRef: { selector: { matchLabels: { 'limits.example.com/replicas': 'true' } }, parameterNotFoundAction: 'Allow' },
      },
    });
    let attempt = 0;
    await waitFor('the selector binding in force', () =>
      client.create(RESOURCES.deployments, deployment(`five-${attempt++}`, 5), 'default').then(
        () => false,
        () => true,
      ),
    );
    await expect(client.create(RESOURCES.deployments, deployment('five', 5), 'default')).rejects.toThrow(
      "with binding 'max-by-label' denied request: too many replicas",
    );
    expect((await client.create<Deployment>(RESOURCES.deployments, deployment('four', 4), 'default')).metadata.uid).toBeTruthy();
  });
});
