import { describe, expect, it } from 'vitest';
import { DECODE_CAUSE, decodeFailure, decodeFailureMessage, decodeObject } from './decode.js';
import { kindSchema, messageSchema } from './from-facts.js';
import { t, type ObjectSchema } from './language.js';
import { NumberLiterals } from './number-literals.js';

const deploymentSchema = kindSchema('apps', 'v1', 'Deployment') as ObjectSchema;
const namespaceSchema = kindSchema('', 'v1', 'Namespace') as ObjectSchema;
const podSchema = kindSchema('', 'v1', 'Pod') as ObjectSchema;
const evictionSchema = kindSchema('policy', 'v1', 'Eviction') as ObjectSchema;
const deleteOptionsSchema = messageSchema('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions');

// Bodies as kubectl sends them (KUBECTL_SURFACE.md §3).
const kubectlRunPod = () => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: 'nginx', creationTimestamp: null, labels: { run: 'nginx' } },
  spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
  status: {},
});

const kubectlCreateDeployment = () => ({
  kind: 'Deployment',
  apiVersion: 'apps/v1',
  metadata: { name: 'nginx', creationTimestamp: null, labels: { app: 'nginx' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'nginx' } },
    template: {
      metadata: { creationTimestamp: null, labels: { app: 'nginx' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] },
    },
    strategy: {},
  },
  status: {},
});

describe('decodeObject', () => {
  it('accepts the bodies kubectl sends, in strict mode', () => {
    for (const [schema, body] of [
      [podSchema, kubectlRunPod()],
      [deploymentSchema, kubectlCreateDeployment()],
      [namespaceSchema, { metadata: { name: 'test' }, spec: {}, status: {} }],
      [deleteOptionsSchema, { propagationPolicy: 'Background', gracePeriodSeconds: 1 }],
      [evictionSchema, { kind: 'Eviction', apiVersion: 'policy/v1', metadata: { name: 'web-1', namespace: 'default' }, deleteOptions: {} }],
    ] as const) {
      expect(decodeObject(schema, body, { strict: true })).toEqual({ errors: [], unknownFields: [] });
    }
  });

  it('accepts a client-side apply body with the last-applied annotation and typed quantities', () => {
    const body = kubectlCreateDeployment();
    Object.assign(body.metadata, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"Deployment"}' } });
    Object.assign(body.spec.template.spec.containers[0]!, {
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      resources: { requests: { cpu: '100m', memory: 128 }, limits: { cpu: 1 } },
      env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      livenessProbe: { httpGet: { path: '/', port: 80 } },
    });
    Object.assign(body.spec, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } } });
    expect(decodeObject(deploymentSchema, body, { strict: true }).errors).toEqual([]);
  });

  it('reports a wrong type the way Go does, naming the struct and the JSON path', () => {
    const body = kubectlCreateDeployment() as Record<string, any>;
    body.spec.replicas = '3';
    const { errors } = decodeObject(deploymentSchema, body);
    expect(errors).toEqual([
      {
        type: DECODE_CAUSE.typeMismatch,
        field: 'spec.replicas',
        message: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
      },
    ]);
    expect(decodeFailureMessage('Deployment', 'v1', errors)).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
  });

  it('refuses integers outside the Go type: int32 past 2^31, int64 past what a double holds exactly, fractions', () => {
    const body = kubectlCreateDeployment() as Record<string, any>;
    body.spec.replicas = 2147483648;
    body.spec.progressDeadlineSeconds = -2147483649;
    body.spec.template.spec.activeDeadlineSeconds = 2 ** 53;
    body.spec.template.spec.terminationGracePeriodSeconds = 1.5;
    body.metadata.generation = Number.MAX_SAFE_INTEGER;
    expect(decodeObject(deploymentSchema, body).errors.map((e) => [e.field, e.message])).toEqual([
      ['spec.replicas', 'json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [
        'spec.template.spec.activeDeadlineSeconds',
        `json: cannot unmarshal number 9007199254740992 into Go struct field PodSpec.spec.template.spec.activeDeadlineSeconds of type int64 (Skiff keeps integers exactly only between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER})`,
      ],
      [
        'spec.template.spec.terminationGracePeriodSeconds',
        'json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.template.spec.terminationGracePeriodSeconds of type int64',
      ],
      [
        'spec.progressDeadlineSeconds',
        'json: cannot unmarshal number -2147483649 into Go struct field DeploymentSpec.spec.progressDeadlineSeconds of type int32',
      ],
    ]);
  });

  it('refuses an integer field written with an exponent or a fraction, quoting the literal as Go does', () => {
    const text =
      '{"spec":{"replicas":1e3,"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80.0}]}]}},"strategy":{"rollingUpdate":{"maxSurge":2E1}}}}';
    const body = JSON.parse(text) as Record<string, unknown>;
    const numberLiterals = NumberLiterals.scan(text);
    expect(decodeObject(deploymentSchema, body).errors).toEqual([]);
    expect(decodeObject(deploymentSchema, body, { numberLiterals }).errors.map((e) => [e.field, e.message])).toEqual([
      ['spec.replicas', 'json: cannot unmarshal number 1e3 into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [
        'spec.template.spec.containers[0].ports[0].containerPort',
        'json: cannot unmarshal number 80.0 into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
      ],
      ['spec.strategy.rollingUpdate.maxSurge', 'json: cannot unmarshal number 2E1 into Go value of type int32'],
    ]);
  });

  it('quotes a long integer literal as written, not as the double it became', () => {
    const text = '{"spec":{"replicas":99999999999999999999}}';
    const { errors } = decodeObject(deploymentSchema, JSON.parse(text), { numberLiterals: NumberLiterals.scan(text) });
    expect(errors.map((e) => e.message)).toEqual([
      'json: cannot unmarshal number 99999999999999999999 into Go struct field DeploymentSpec.spec.replicas of type int32',
    ]);
  });

  it('names the innermost struct and leaves list indices out of the Go path', () => {
    const body = kubectlCreateDeployment() as Record<string, any>;
    body.spec.template.spec.containers[0].image = 7;
    body.spec.template.spec.containers[0].ports = [{ containerPort: 80.5 }];
    const { errors } = decodeObject(deploymentSchema, body);
    expect(errors.map((e) => [e.field, e.message])).toEqual([
      [
        'spec.template.spec.containers[0].image',
        'json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string',
      ],
      [
        'spec.template.spec.containers[0].ports[0].containerPort',
        'json: cannot unmarshal number 80.5 into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
      ],
    ]);
  });

  it('prints Go type names for lists, maps, structs and named string types', () => {
    const body = kubectlRunPod() as Record<string, any>;
    body.metadata.labels = { run: true };
    body.spec.restartPolicy = 1;
    body.spec.containers[0].command = 'sleep';
    body.spec.nodeSelector = [];
    body.status = 'Running';
    expect(decodeObject(podSchema, body).errors.map((e) => e.message)).toEqual([
      'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string',
      'json: cannot unmarshal string into Go struct field Container.spec.containers.command of type []string',
      'json: cannot unmarshal number into Go struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy',
      'json: cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector of type map[string]string',
      'json: cannot unmarshal string into Go struct field Pod.status of type v1.PodStatus',
    ]);
  });

  it('rejects a body that is not an object', () => {
    expect(decodeObject(podSchema, [1]).errors[0]?.message).toBe('json: cannot unmarshal array into Go value of type v1.Pod');
  });

  it('checks quantities, IntOrStrings and times with the messages of their Go decoders', () => {
    const body = kubectlCreateDeployment() as Record<string, any>;
    body.spec.template.spec.containers[0].resources = { limits: { cpu: 'lots' } };
    body.spec.strategy = { rollingUpdate: { maxSurge: true } };
    body.metadata.creationTimestamp = '2024-13-01T00:00:00Z';
    body.metadata.deletionTimestamp = 'yesterday';
    expect(decodeObject(deploymentSchema, body).errors.map((e) => [e.field, e.message])).toEqual([
      ['metadata.creationTimestamp', 'parsing time "2024-13-01T00:00:00Z": month out of range'],
      ['metadata.deletionTimestamp', 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'],
      ['spec.template.spec.containers[0].resources.limits[cpu]', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
      ['spec.strategy.rollingUpdate.maxSurge', 'json: cannot unmarshal bool into Go value of type int32'],
    ]);
  });

  it('accepts RFC 3339 times with fractions and offsets, and rejects malformed ones', () => {
    const schema = t.object('T', { at: t.time() }, { package: 'x.v1' });
    for (const good of ['2024-02-29T23:59:59Z', '2024-01-01T00:00:00.123456+02:00', '2024-01-01T00:00:00.5-07:30']) {
      expect(decodeObject(schema, { at: good }).errors).toEqual([]);
    }
    const message = (at: unknown) => decodeObject(schema, { at }).errors[0]?.message;
    expect(message('2023-02-29T00:00:00Z')).toBe('parsing time "2023-02-29T00:00:00Z": day out of range');
    expect(message('2024-01-01 00:00:00Z')).toBe('parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"');
    expect(message('2024-01-01T00:00:00')).toBe('parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"');
    expect(message('2024-01-01T00:00:00Zjunk')).toBe('parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"');
    expect(message(5)).toBe('json: cannot unmarshal number into Go value of type string');
  });

  it('makes unknown fields errors with strict validation, in one strict decoding message', () => {
    const body = kubectlCreateDeployment() as Record<string, any>;
    body.spec.foo = 1;
    body.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
    const result = decodeObject(deploymentSchema, body, { strict: true });
    // Document order: the template comes before the field added last.
    expect(result.unknownFields).toEqual(['spec.template.spec.containers[0].imagePullPolicyy', 'spec.foo']);
    expect(result.errors.map((e) => e.message)).toEqual(['unknown field "spec.template.spec.containers[0].imagePullPolicyy"', 'unknown field "spec.foo"']);
    expect(decodeFailureMessage('Deployment', 'v1', result.errors)).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolicyy", unknown field "spec.foo"',
    );
  });

  it('puts type errors before strict errors, as Go returns the type error', () => {
    const body = kubectlRunPod() as Record<string, any>;
    body.spec.bogus = true;
    body.spec.hostNetwork = 'yes';
    const result = decodeObject(podSchema, body, { strict: true });
    expect(result.errors.map((e) => e.type)).toEqual([DECODE_CAUSE.typeMismatch, DECODE_CAUSE.unknownField]);
    expect(decodeFailureMessage('Pod', 'v1', result.errors)).toBe(
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool',
    );
  });

  it('only reports unknown fields without strict validation', () => {
    const body = kubectlRunPod() as Record<string, any>;
    body.spec.foo = 1;
    expect(decodeObject(podSchema, body)).toEqual({ errors: [], unknownFields: ['spec.foo'] });
    expect(body.spec.foo).toBe(1);
  });

  it('normalizes like a typed round trip: unknown and null fields go, numeric quantities become strings', () => {
    const body = kubectlRunPod() as Record<string, any>;
    body.spec.foo = 1;
    body.spec.nodeName = null;
    body.spec.containers[0].resources = { limits: { cpu: 2, memory: '1Gi' } };
    body.spec.containers[0].args = ['a', null];
    body.spec.containers[0].securityContext = { unknownToSkiff: null };
    decodeObject(podSchema, body, { normalize: true });
    expect(body.metadata).toEqual({ name: 'nginx', labels: { run: 'nginx' } });
    expect(body.spec.foo).toBeUndefined();
    expect('nodeName' in body.spec).toBe(false);
    expect(body.spec.containers[0].resources.limits).toEqual({ cpu: '2', memory: '1Gi' });
    expect(body.spec.containers[0].args).toEqual(['a', '']);
    // Every struct is modelled from the API facts, nested ones too.
    expect(body.spec.containers[0].securityContext).toEqual({});
  });

  it('builds the 400 BadRequest for a failed decode', () => {
    const causes = decodeObject(podSchema, { spec: { containers: {} } }).errors;
    const status = decodeFailure('Pod', 'v1', causes).toStatus();
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(status.message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container',
    );
  });

  it('decodes a large pod list quickly enough to run on every write', () => {
    const body = kubectlRunPod() as Record<string, any>;
    body.spec.containers = Array.from({ length: 20 }, (_, i) => ({
      name: `c${i}`,
      image: 'nginx:1.25',
      env: Array.from({ length: 20 }, (_, j) => ({ name: `V${j}`, value: 'x' })),
      ports: [{ containerPort: 80 + i }],
      resources: { requests: { cpu: '100m', memory: '64Mi' } },
    }));
    const started = performance.now();
    for (let i = 0; i < 200; i++) decodeObject(podSchema, body, { strict: true });
    const perDecodeMs = (performance.now() - started) / 200;
    expect(perDecodeMs).toBeLessThan(2);
  });
});
