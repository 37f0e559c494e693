import type { ResourceDefinition, ValidatingAdmissionPolicy } from '@skiff/api';
import { t } from '@skiff/api/schema';
import { describe, expect, it } from 'vitest';
import { fieldProblems, typeCheck } from './typecheck.js';

const pkg = { package: 'io.k8s.api.apps.v1' };
const metadata = t.object('ObjectMeta', { name: t.string(), labels: t.map(t.string()) }, { package: 'io.k8s.apimachinery.pkg.apis.meta.v1' });
const deploymentSchema = t.object(
  'Deployment',
  {
    apiVersion: t.string(),
    kind: t.string(),
    metadata,
    spec: t.object('DeploymentSpec', { replicas: t.int32(), template: t.any(), strategy: t.array(t.string()) }, pkg),
  },
  pkg,
);
const configMapSchema = t.object('ConfigMap', { metadata, data: t.map(t.string()) }, { package: 'io.k8s.api.core.v1' });

const served = [
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', schema: deploymentSchema },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', schema: configMapSchema },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' },
] as ResourceDefinition[];

describe('fieldProblems', () => {
  const roots = { object: deploymentSchema, params: configMapSchema };

  it('finds a field the schema does not have, with cel-go’s caret at the selection', () => {
    expect(fieldProblems('object.spec.replicass > 1', roots)).toEqual([
      "ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^",
    ]);
  });

  it('accepts declared fields, map keys, fields below a schemaless value, and has() of them', () => {
    const fine = [
      'object.spec.replicas <= int(params.data.maxReplicas)',
      'has(object.metadata.labels) && object.metadata.labels.team == "a"',
      'object.spec.template.spec.containers.all(c, c.image != "")',
      'object.spec.strategy.all(s, s != "")',
      'variables.whatever.field',
    ];
    for (const expression of fine) expect(fieldProblems(expression, roots), expression).toEqual([]);
  });

  it('refuses selecting from a list or a scalar, and leaves comprehension variables alone', () => {
    expect(fieldProblems('object.spec.strategy.type', roots)[0]).toContain("type 'list' does not support field selection");
    expect(fieldProblems('object.spec.replicas.value', roots)[0]).toContain("type 'int32' does not support field selection");
    expect(fieldProblems('[1].all(object, object.nothing)', roots)).toEqual([]);
    expect(fieldProblems('has(object.spec.pause)', roots)[0]).toContain("undefined field 'pause'");
  });
});

describe('typeCheck', () => {
  const policy = (validations: { expression: string; messageExpression?: string }[], resources = ['deployments']): ValidatingAdmissionPolicy => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'p' },
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['v1'], operations: ['CREATE'], resources }] },
      validations,
    },
  });

  it('warns per expression and per matched kind, naming the field that holds the expression', () => {
    expect(typeCheck(policy([{ expression: 'object.spec.replicas < 3', messageExpression: 'string(object.spec.replica)' }]), served)).toEqual([
      {
        fieldRef: 'spec.validations[0].messageExpression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:19: undefined field 'replica'\n | string(object.spec.replica)\n | ..................^",
      },
    ]);
    expect(typeCheck(policy([{ expression: 'params.dta.max == "1"' }]), served)[0]!.warning).toContain("undefined field 'dta'");
  });

  it('has nothing to say of kinds without a schema or of an expression that is right', () => {
    expect(typeCheck(policy([{ expression: 'object.anything' }], ['secrets']), served)).toEqual([]);
    expect(typeCheck(policy([{ expression: 'object.metadata.name != ""' }], ['*']), served)).toEqual([]);
  });
});
