import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { ADMISSIONREGISTRATION_KINDS } from './admissionregistration.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { definition, create, fields, cells } = kindHarness(ADMISSIONREGISTRATION_KINDS);

const webhook = {
  name: 'pods.policy.example.com',
  clientConfig: { service: { namespace: 'policy', name: 'webhook', path: '/validate' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
};

describe('webhook configurations', () => {
  it('defaults each webhook and prints the count', () => {
    const config = create('mutatingwebhookconfigurations', { metadata: { name: 'policy' }, webhooks: [webhook] }) as KubeObject & { webhooks: object[] };
    expect(config.webhooks[0]).toEqual({
      ...webhook,
      clientConfig: { service: { namespace: 'policy', name: 'webhook', path: '/validate', port: 443 } },
      rules: [{ ...webhook.rules[0], scope: '*' }],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
    });
    expect(cells('mutatingwebhookconfigurations', config)).toEqual(['policy', 1, '3h5m']);
    const validating = create('validatingwebhookconfigurations', { metadata: { name: 'policy' }, webhooks: [webhook] }) as KubeObject & { webhooks: object[] };
    expect(validating.webhooks[0]).not.toHaveProperty('reinvocationPolicy');
    expect(definition('validatingwebhookconfigurations').categories).toEqual(['api-extensions']);
  });

  it('requires sideEffects, review versions and one client config', () => {
    const { sideEffects: _, admissionReviewVersions: __, ...bare } = webhook;
    expect(
      fields('validatingwebhookconfigurations', {
        metadata: { name: 'policy' },
        webhooks: [
          { ...bare, name: 'short', clientConfig: { url: 'http://example.com/x' }, timeoutSeconds: 31 },
          { ...webhook, sideEffects: 'Some', clientConfig: {} },
        ],
      }),
    ).toEqual([
      'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
      'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
      'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
      'webhooks[0].clientConfig.url: Invalid value: "http://example.com/x": \'https\' is the only allowed URL scheme',
      'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[1].clientConfig: Required value: exactly one of url or service is required',
    ]);
  });

  it('takes an empty Service path as the root, and checks each segment of any other', () => {
    const withPaths = (...paths: string[]) =>
      fields('validatingwebhookconfigurations', {
        metadata: { name: 'policy' },
        webhooks: paths.map((path, i) => ({
          ...webhook,
          name: `w${i}.example.com`,
          clientConfig: { service: { namespace: 'policy', name: 'webhook', path } },
        })),
      });
    expect(withPaths('', '/', '/validate/', '/a.b/c-d')).toEqual([]);
    expect(withPaths('//', 'validate', '/a//b', '/Upper')).toEqual([
      'webhooks[0].clientConfig.service.path: Invalid value: "//": segment[0] may not be empty',
      'webhooks[1].clientConfig.service.path: Invalid value: "validate": must start with a \'/\'',
      'webhooks[2].clientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty',
      expect.stringMatching(/^webhooks\[3\]\.clientConfig\.service\.path: Invalid value: "\/Upper": segment\[0\]: a lowercase RFC 1123 subdomain/),
    ]);
  });
});

describe('admission policies and bindings', () => {
  const match = { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] };

  it('defaults a validating policy and prints Validations and ParamKind', () => {
    const policy = create('validatingadmissionpolicies', {
      metadata: { name: 'replicas' },
      spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints: match, validations: [{ expression: 'object.spec.replicas <= 5' }] },
    }) as KubeObject & { spec: Record<string, unknown> };
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints).toEqual({
      ...match,
      resourceRules: [{ ...match.resourceRules[0], scope: '*' }],
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
    expect(cells('validatingadmissionpolicies', policy)).toEqual(['replicas', 1, 'v1/ConfigMap', '3h5m']);
    expect(fields('validatingadmissionpolicies', { metadata: { name: 'empty' }, spec: {} })).toEqual([
      'spec.matchConstraints: Required value',
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
    ]);
  });

  it('prints a mutating policy with its mutations', () => {
    const policy = create('mutatingadmissionpolicies', {
      metadata: { name: 'labels' },
      spec: { matchConstraints: match, mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{}' } }] },
    }) as KubeObject & { spec: Record<string, unknown> };
    expect(policy.spec.reinvocationPolicy).toBe('Never');
    expect(cells('mutatingadmissionpolicies', policy)).toEqual(['labels', 1, '<unset>', '3h5m']);
  });

  it('prints bindings with PolicyName and ParamRef and checks their actions', () => {
    const binding = create('validatingadmissionpolicybindings', {
      metadata: { name: 'replicas-binding' },
      spec: { policyName: 'replicas', validationActions: ['Deny'], paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } },
    });
    expect(cells('validatingadmissionpolicybindings', binding)).toEqual(['replicas-binding', 'replicas', '*/limits', '3h5m']);
    expect(
      fields('validatingadmissionpolicybindings', {
        metadata: { name: 'b' },
        spec: { policyName: 'p', validationActions: ['Deny', 'Deny'], paramRef: { namespace: 'x' } },
      }),
    ).toEqual([
      'spec.paramRef: Required value: one of name or selector must be specified',
      'spec.paramRef.parameterNotFoundAction: Required value',
      'spec.validationActions[1]: Duplicate value: "Deny"',
    ]);
    const mutating = create('mutatingadmissionpolicybindings', {
      metadata: { name: 'm' },
      spec: { policyName: 'labels', paramRef: { selector: { matchLabels: { tier: 'a' } }, parameterNotFoundAction: 'Allow' } },
    });
    expect(cells('mutatingadmissionpolicybindings', mutating)).toEqual(['m', 'labels', 'tier=a', '3h5m']);
  });
});
