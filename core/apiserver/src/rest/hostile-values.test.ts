import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError, type KubeObject } from '@skiff/api';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { createWithGeneratedName, GENERATE_NAME_ATTEMPTS, generatedName } from './generate-name.js';
import { MAX_GRACE_PERIOD_SECONDS } from './delete-options.js';
import { translateStoreError } from './store-errors.js';

// Values a careless or hostile client sends that Kubernetes' typed decoding refuses, against the built-in kinds.

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const PODS = '/api/v1/namespaces/default/pods';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

/** A Deployment as JSON text, with `replicas` written exactly as given. */
const deploymentText = (name: string, replicas: string) =>
  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}"},"spec":{"replicas":${replicas},` +
  `"selector":{"matchLabels":{"app":"${name}"}},"template":{"metadata":{"labels":{"app":"${name}"}},` +
  `"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`;

const replicasOf = async (name: string) => (await server.request('GET', `${DEPLOYMENTS}/${name}`)).json.spec.replicas;

describe('integers out of their Go type', () => {
  beforeAll(async () => {
    expect((await server.request('POST', DEPLOYMENTS, { body: deploymentText('scaled', '1') })).status).toBe(201);
  });

  it('refuses replicas past int32 through /scale (PUT and merge patch) and leaves the Deployment alone', async () => {
    const put = await server.request('PUT', `${DEPLOYMENTS}/scaled/scale`, {
      body: '{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"scaled"},"spec":{"replicas":2147483648}}',
    });
    expect(put.status).toBe(400);
    expect(put.json).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      details: { causes: [{ reason: 'FieldValueTypeInvalid', field: 'spec.replicas' }] },
    });
    expect(put.json.message).toBe(
      'Scale in version "v1" cannot be handled as a Scale: spec.replicas: json: cannot unmarshal number 2147483648 into Go struct field ScaleSpec.spec.replicas of type int32',
    );
    const patch = await server.request('PATCH', `${DEPLOYMENTS}/scaled/scale`, { body: '{"spec":{"replicas":4294967297}}', contentType: MERGE });
    expect(patch.status).toBe(400);
    expect(patch.json.message).toContain('cannot unmarshal number 4294967297 into Go struct field ScaleSpec.spec.replicas of type int32');
    expect(await replicasOf('scaled')).toBe(1);
  });

  it('refuses an int32 or int64 field past its range in the object itself, by every write', async () => {
    const create = await server.request('POST', DEPLOYMENTS, { body: deploymentText('big', '2147483648') });
    expect(create.status).toBe(400);
    expect(create.json.message).toContain('json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32');
    for (const [contentType, body] of [
      [MERGE, '{"spec":{"replicas":-2147483649}}'],
      [STRATEGIC, '{"spec":{"replicas":2147483648}}'],
      [JSON_PATCH, '[{"op":"replace","path":"/spec/replicas","value":2147483648}]'],
    ] as const) {
      const patched = await server.request('PATCH', `${DEPLOYMENTS}/scaled`, { body, contentType });
      expect(patched.status, contentType).toBe(400);
      expect(patched.json.details.causes[0].field).toBe('spec.replicas');
    }
    // An int64 Go would take, but a double would round: refused rather than stored as another number.
    const deadline = await server.request('PATCH', `${DEPLOYMENTS}/scaled`, {
      body: '{"spec":{"template":{"spec":{"activeDeadlineSeconds":9223372036854775807}}}}',
      contentType: MERGE,
    });
    expect(deadline.status).toBe(400);
    expect(deadline.json.message).toContain(
      'cannot unmarshal number 9223372036854775807 into Go struct field PodSpec.spec.template.spec.activeDeadlineSeconds of type int64 (Skiff keeps integers exactly',
    );
    expect(await replicasOf('scaled')).toBe(1);
  });

  it('refuses numbers beyond a double (1e400) anywhere in a body', async () => {
    const answer = await server.request('POST', CONFIGMAPS, {
      body: '{"metadata":{"name":"inf","annotations":{"a":"b"}},"binaryData":{},"data":{"x":"1"},"immutable":false,"extra":1e400}',
    });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe("the request body holds a number that is not finite or is beyond a float64's range at extra");
    const yaml = await server.request('POST', DEPLOYMENTS, { body: 'metadata: {name: inf}\nspec: {replicas: .inf}\n', contentType: 'application/yaml' });
    expect(yaml.status).toBe(400);
  });
});

describe('integers written with a fraction or an exponent', () => {
  beforeAll(async () => {
    expect((await server.request('POST', DEPLOYMENTS, { body: deploymentText('literal', '2') })).status).toBe(201);
  });

  it('refuses them in a JSON create, naming the literal as Go does', async () => {
    for (const literal of ['1e3', '1.0', '10E-1']) {
      const answer = await server.request('POST', DEPLOYMENTS, { body: deploymentText('exp', literal) });
      expect(answer.status, literal).toBe(400);
      expect(answer.json.message).toBe(
        `Deployment in version "v1" cannot be handled as a Deployment: spec.replicas: json: cannot unmarshal number ${literal} into Go struct field DeploymentSpec.spec.replicas of type int32`,
      );
    }
    // A quantity takes them, as resource.Quantity's own decoder does.
    const pod = await server.request('POST', PODS, {
      body: '{"metadata":{"name":"quantity"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"limits":{"cpu":1e1,"memory":1.5e9}}}]}}',
    });
    expect(pod.status).toBe(201);
  });

  it('takes 1e3 from YAML, which Kubernetes reads as the number 1000 first, in block or flow style', async () => {
    const block = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: yaml-exp}',
      'spec:',
      '  replicas: 1e3',
      '  selector: {matchLabels: {app: y}}',
      '  template:',
      '    metadata: {labels: {app: y}}',
      '    spec: {containers: [{name: web, image: nginx}]}',
      '',
    ].join('\n');
    const created = await server.request('POST', DEPLOYMENTS, { body: block, contentType: 'application/yaml' });
    expect(created.status).toBe(201);
    expect(created.json.spec.replicas).toBe(1000);
    const flow = await server.request('POST', DEPLOYMENTS, { body: deploymentText('yaml-flow', '1.5e1'), contentType: 'application/yaml' });
    expect(flow.status).toBe(201);
    expect(flow.json.spec.replicas).toBe(15);
  });

  it('refuses them in merge and JSON patches (which keep the literal) and takes them in strategic merge patches (which do not)', async () => {
    const merge = await server.request('PATCH', `${DEPLOYMENTS}/literal`, { body: '{"spec":{"replicas":1e1}}', contentType: MERGE });
    expect(merge.status).toBe(400);
    expect(merge.json.message).toContain('cannot unmarshal number 1e1 into Go struct field DeploymentSpec.spec.replicas of type int32');
    const jsonPatch = await server.request('PATCH', `${DEPLOYMENTS}/literal`, {
      body: '[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"side","image":"busybox","ports":[{"containerPort":8e1}]}}]',
      contentType: JSON_PATCH,
    });
    expect(jsonPatch.status).toBe(400);
    expect(jsonPatch.json.details.causes[0].field).toBe('spec.template.spec.containers[1].ports[0].containerPort');
    const scale = await server.request('PATCH', `${DEPLOYMENTS}/literal/scale`, { body: '{"spec":{"replicas":3.0}}', contentType: MERGE });
    expect(scale.status).toBe(400);
    expect(await replicasOf('literal')).toBe(2);
    const strategic = await server.request('PATCH', `${DEPLOYMENTS}/literal`, { body: '{"spec":{"replicas":1e1}}', contentType: STRATEGIC });
    expect(strategic.status).toBe(200);
    expect(strategic.json.spec.replicas).toBe(10);
  });
});

describe('YAML merge keys', () => {
  it('merges `<<` anchors as Kubernetes does, keys of the mapping itself winning', async () => {
    const manifest = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: merged',
      '  labels: &common',
      '    app: web',
      '    tier: front',
      '  annotations:',
      '    <<: *common',
      '    tier: back',
      'data:',
      '  <<: [{a: "1"}, {b: "2"}]',
      '  c: "3"',
      '',
    ].join('\n');
    const created = await server.request('POST', CONFIGMAPS, { body: manifest, contentType: 'application/yaml' });
    expect(created.status).toBe(201);
    expect(created.json.metadata.labels).toEqual({ app: 'web', tier: 'front' });
    expect(created.json.metadata.annotations).toEqual({ app: 'web', tier: 'back' });
    expect(created.json.data).toEqual({ a: '1', b: '2', c: '3' });
  });
});

describe('delete options', () => {
  beforeAll(async () => {
    const bound = { metadata: { name: 'bound' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] } };
    expect((await server.request('POST', PODS, { body: bound })).status).toBe(201);
  });

  it('refuses a grace period past the longest Go duration, from the query or the body, as a 422 naming it', async () => {
    for (const request of [
      { path: `${PODS}/bound?gracePeriodSeconds=${MAX_GRACE_PERIOD_SECONDS + 1}` },
      { path: `${PODS}/bound`, body: '{"gracePeriodSeconds":9007199254740991}' },
      { path: PODS + `?gracePeriodSeconds=${Number.MAX_SAFE_INTEGER}` },
    ]) {
      const answer = await server.request('DELETE', request.path, request.body ? { body: request.body } : {});
      expect(answer.status, request.path).toBe(422);
      expect(answer.json).toMatchObject({
        reason: 'Invalid',
        details: { kind: 'DeleteOptions', group: 'meta.k8s.io', causes: [{ field: 'gracePeriodSeconds' }] },
      });
    }
    const longest = await server.request('DELETE', `${PODS}/bound?gracePeriodSeconds=${MAX_GRACE_PERIOD_SECONDS}&dryRun=All`);
    expect(longest.status).toBe(200);
    expect(longest.json.metadata.deletionGracePeriodSeconds).toBe(MAX_GRACE_PERIOD_SECONDS);
  });

  it('type-checks a DeleteOptions body as Go decodes it', async () => {
    for (const [body, what] of [
      ['{"gracePeriodSeconds":1e300}', 'number 1e300'],
      ['{"gracePeriodSeconds":30.0}', 'number 30.0'],
      ['{"gracePeriodSeconds":"30"}', 'string'],
    ]) {
      const answer = await server.request('DELETE', `${PODS}/bound`, { body });
      expect(answer.status, body).toBe(400);
      expect(answer.json.message).toBe(
        `DeleteOptions in version "v1" cannot be handled as a DeleteOptions: gracePeriodSeconds: json: cannot unmarshal ${what} into Go struct field DeleteOptions.gracePeriodSeconds of type int64`,
      );
    }
    const eviction = await server.request('POST', `${PODS}/bound/eviction`, {
      body: '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"bound"},"deleteOptions":{"gracePeriodSeconds":1.5}}',
    });
    expect(eviction.status).toBe(400);
    expect(eviction.json.message).toContain('cannot unmarshal number 1.5 into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64');
    expect((await server.request('GET', `${PODS}/bound`)).json.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('generateName', () => {
  it('cuts a long prefix so the generated name stays within 63 characters', async () => {
    const prefix = `${'a'.repeat(70)}-`;
    const created = await server.request('POST', CONFIGMAPS, { body: { metadata: { generateName: prefix } } });
    expect(created.status).toBe(201);
    expect(created.json.metadata.name).toMatch(new RegExp(`^${'a'.repeat(58)}[a-z0-9]{5}$`));
    expect(generatedName('web-', 'xyz12')).toBe('web-xyz12');
  });

  /** A create of a ConfigMap into the server's store, failing as the create path does when the name is taken. */
  const storeCreate = (candidate: KubeObject) =>
    server.store.create(`/registry/configmaps/default/${candidate.metadata.name}`, candidate).catch((err: unknown) => {
      throw translateStoreError(err, { resource: 'configmaps', group: '' } as never, candidate.metadata.name!);
    });

  it('tries another name when the generated one is taken', async () => {
    for (const taken of ['taken-aaaaa', 'taken-bbbbb']) await storeCreate({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: taken } });
    const offered = ['aaaaa', 'bbbbb', 'ccccc'];
    const created = await createWithGeneratedName(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'taken-' }, data: { a: '1' } },
      { resource: 'configmaps', group: '' },
      storeCreate,
      () => offered.shift()!,
    );
    expect(created.object.metadata.name).toBe('taken-ccccc');
    expect(offered).toEqual([]);
    expect((await server.request('GET', `${CONFIGMAPS}/taken-ccccc`)).json.data).toEqual({ a: '1' });
  });

  it(`answers 409 AlreadyExists with a retry hint after ${GENERATE_NAME_ATTEMPTS} taken names`, async () => {
    await storeCreate({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'full-zzzzz' } });
    let attempts = 0;
    const failure = await createWithGeneratedName(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'full-' } },
      { resource: 'configmaps', group: '' },
      storeCreate,
      () => {
        attempts++;
        return 'zzzzz';
      },
    ).catch((err: unknown) => err);
    expect(attempts).toBe(GENERATE_NAME_ATTEMPTS);
    expect(isApiError(failure, 'AlreadyExists')).toBe(true);
    expect(failure).toMatchObject({
      status: 409,
      message: 'configmaps "full-zzzzz" already exists, the server was not able to generate a unique name for the object',
      details: { name: 'full-zzzzz', kind: 'configmaps', retryAfterSeconds: 1 },
    });
  });
});
