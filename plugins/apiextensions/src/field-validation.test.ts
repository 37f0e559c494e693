import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { RESOURCES, type CustomResourceDefinition } from '@skiff/api';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';

// Server-side field validation of custom resources as the FieldValidation conformance tests send it: server-side
// apply of YAML with fieldValidation=Strict, answered in upstream's words. The dev preset's cluster, this plugin
// from its build.

let cluster: TestCluster;
const GROUP = 'fields.example.com';

/** The admin kubeconfig's server, CA and token. */
function credentials(): { server: string; ca: string; token: string } {
  const text = readFileSync(cluster.kubeconfig, 'utf8');
  const field = (name: string) => new RegExp(`${name}: *"?([^"\\n]+)"?`).exec(text)?.[1] ?? '';
  return { server: field('server'), ca: Buffer.from(field('certificate-authority-data'), 'base64').toString('utf8'), token: field('token') };
}

function apply(path: string, yaml: string): Promise<{ status: number; body: string }> {
  const { server, ca, token } = credentials();
  const url = new URL(`${path}?fieldManager=field_validation_mgr&fieldValidation=Strict`, server);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PATCH', ca, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/apply-patch+yaml' } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(yaml);
  });
}

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        foo: { type: 'string' },
        cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { kind: { type: 'string' } } },
        ports: {
          type: 'array',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          'x-kubernetes-list-type': 'map',
          items: {
            type: 'object',
            required: ['containerPort', 'protocol'],
            properties: { containerPort: { type: 'integer', format: 'int32' }, name: { type: 'string' }, protocol: { type: 'string' } },
          },
        },
      },
    },
  },
};

function crd(kind: string, openAPIV3Schema: object): CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: openAPIV3Schema as never } }],
    },
  };
}

beforeAll(async () => {
  cluster = await startTestCluster({ logLevel: 'error' });
  await cluster.client.create(RESOURCES.customresourcedefinitions, crd('Noxu', schema));
  const preserving = { ...schema, properties: { spec: { ...schema.properties.spec, 'x-kubernetes-preserve-unknown-fields': true } } };
  await cluster.client.create(RESOURCES.customresourcedefinitions, crd('Keeper', preserving));
  for (const [resource, kind] of [
    ['noxus', 'Noxu'],
    ['keepers', 'Keeper'],
  ])
    await waitFor(`${resource} served`, () => cluster.client.list({ group: GROUP, version: 'v1', resource: resource!, kind: kind!, namespaced: false }));
}, 60_000);
afterAll(async () => cluster?.stop());

const PATH = `/apis/${GROUP}/v1/noxus/mytest`;
const head = `apiVersion: ${GROUP}/v1\nkind: Noxu\nmetadata:\n  name: mytest\n`;
const ports = '  cronSpec: "* * * * */5"\n  ports:\n  - name: x\n    containerPort: 80\n    protocol: TCP\n';

describe('Strict field validation of custom resources through server-side apply', () => {
  it('names a field the schema does not declare', async () => {
    const { status, body } = await apply(PATH, `\n${head}unknownField: unknown\nspec:\n  foo: foo1\n${ports}`);
    expect(status).toBe(500);
    expect(body).toContain('.unknownField: field not declared in schema');
  });

  it('names unknown metadata fields, at the root and in an embedded object', async () => {
    const yaml = `\n${head}  unknownMeta: unknown\nspec:\n  template:\n    apiversion: foo/v1\n    kind: Sub\n    metadata:\n        unknownSubMeta: unknown\n        name: subobject\n  foo: foo1\n${ports}`;
    const { body } = await apply(PATH, yaml);
    expect(body).toMatch(/\.spec\.template\.metadata\.unknownSubMeta: field not declared in schema|\.metadata\.unknownMeta: field not declared in schema/);
  });

  it('names a duplicate key by its YAML line where the schema keeps unknown fields', async () => {
    const keeper = head.replace('kind: Noxu', 'kind: Keeper');
    const { body } = await apply(`/apis/${GROUP}/v1/keepers/mytest`, `\n${keeper}spec:\n  unknown: uk1\n  foo: foo1\n  foo: foo2\n${ports}`);
    expect(body).toContain('line 9: key \\"foo\\" already set in map');
  });
});
