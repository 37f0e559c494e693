import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

// The body of upstream's e2e test "should detect unknown and duplicate fields of a typed object".
const deploymentJson = (name: string) => `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "${name}", "labels": {"app": "nginx"}},
  "spec": {
    "unknownField": "foo",
    "replicas": 2,
    "replicas": 3,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "name": "nginx"}]}
    }
  }
}`;

const deploymentYaml = (name: string) =>
  [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  unknownField: foo',
    '  replicas: 2',
    '  replicas: 3',
    '  selector: {matchLabels: {app: nginx}}',
    '  template:',
    '    metadata: {labels: {app: nginx}}',
    '    spec: {containers: [{name: nginx, image: nginx}]}',
  ].join('\n');

describe('strict field validation of built-in kinds, in upstream’s words', () => {
  it('names unknown and repeated JSON fields by their full path', async () => {
    const strict = await server.request('POST', `${DEPLOYMENTS}?fieldManager=field_validation_mgr&fieldValidation=Strict`, {
      body: deploymentJson('strict'),
      contentType: 'application/json',
    });
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas", duplicate field "spec.template.spec.containers[0].name"',
    );
    const warned = await server.request('POST', `${DEPLOYMENTS}?fieldValidation=Warn`, { body: deploymentJson('warned'), contentType: 'application/json' });
    expect(warned.status).toBe(201);
    expect(warned.json.spec.replicas).toBe(3);
    expect(warned.headers.warning).toBe(
      '299 - "unknown field \\"spec.unknownField\\"", 299 - "duplicate field \\"spec.replicas\\"", 299 - "duplicate field \\"spec.template.spec.containers[0].name\\""',
    );
  });

  it('reports keys a YAML body repeats by line, as Go’s YAML decoder, before unknown fields', async () => {
    const strict = await server.request('POST', `${DEPLOYMENTS}?fieldValidation=Strict`, {
      body: deploymentYaml('yaml-strict'),
      contentType: 'application/yaml',
    });
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: yaml: unmarshal errors:\n  line 8: key "replicas" already set in map, unknown field "spec.unknownField"',
    );
    const warned = await server.request('POST', `${DEPLOYMENTS}?fieldValidation=Warn`, {
      body: deploymentYaml('yaml-warned'),
      contentType: 'application/yaml',
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toBe('299 - "line 8: key \\"replicas\\" already set in map", 299 - "unknown field \\"spec.unknownField\\""');
  });

  it('refuses an apply patch repeating a key with Strict (after the apply), and warns with Warn', async () => {
    // A leading newline as in upstream's e2e body: the repeated key's value is on line 8.
    const applied = (name: string) => `\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  foo: foo1\n  foo: foo2\n`;
    const strict = await server.request('PATCH', `${CONFIGMAPS}/apply-strict?fieldManager=field_validation_mgr&fieldValidation=Strict`, {
      body: applied('apply-strict'),
      contentType: 'application/apply-patch+yaml',
    });
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe('error strict decoding YAML: yaml: unmarshal errors:\n  line 8: key "foo" already set in map');
    expect((await server.request('GET', `${CONFIGMAPS}/apply-strict`)).status).toBe(404);
    const warned = await server.request('PATCH', `${CONFIGMAPS}/apply-warned?fieldManager=field_validation_mgr&fieldValidation=Warn`, {
      body: applied('apply-warned'),
      contentType: 'application/apply-patch+yaml',
    });
    expect(warned.status).toBe(201);
    expect(warned.json.data).toEqual({ foo: 'foo2' });
    expect(warned.headers.warning).toBe('299 - "line 8: key \\"foo\\" already set in map"');
    // kubectl sends apply patches as JSON: Go's YAML decoder reads those too, line by line.
    const json = await server.request('PATCH', `${CONFIGMAPS}/apply-warned?fieldManager=field_validation_mgr&fieldValidation=Strict`, {
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"apply-warned"},\n"data":{"a":"1",\n"a":"2"}}',
      contentType: 'application/apply-patch+yaml',
    });
    expect(json.json.message).toBe('error strict decoding YAML: yaml: unmarshal errors:\n  line 3: key "a" already set in map');
  });

  it('fails an apply of fields the kind does not declare, whatever the field validation', async () => {
    for (const validation of ['Strict', 'Ignore']) {
      const response = await server.request('PATCH', `${CONFIGMAPS}/undeclared?fieldManager=m&fieldValidation=${validation}`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'undeclared', unknownMeta: 'x' }, unknownField: 'unknown', data: { a: 'b' } },
        contentType: 'application/apply-patch+yaml',
      });
      expect(response.status).toBe(500);
      expect(response.json.reason).toBeUndefined();
      expect(response.json.message).toBe(
        'failed to create typed patch object (/undeclared; /v1, Kind=ConfigMap): errors:\n  .metadata.unknownMeta: field not declared in schema\n  .unknownField: field not declared in schema',
      );
    }
    await server.request('POST', DEPLOYMENTS, { body: JSON.parse(deploymentJson('applied').replace('"unknownField": "foo",', '')) });
    const list = await server.request('PATCH', `${DEPLOYMENTS}/applied?fieldManager=m`, {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'applied' },
        spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx', imageTag: 'x' }] } } },
      },
      contentType: 'application/apply-patch+yaml',
    });
    expect(list.status).toBe(500);
    expect(list.json.message).toBe(
      'failed to create typed patch object (/applied; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="nginx"].imageTag: field not declared in schema',
    );
  });
});
