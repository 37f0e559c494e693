import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { RESOURCES, type CustomResourceDefinition } from '@skiff/api';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';

// What the conformance tests read: /openapi/v2 definitions (compared with the CRD's schema once the apiVersion,
// kind and metadata properties and the GVK extension are dropped), and kubectl explain / create / apply, which
// read /openapi/v3. The cluster is the dev preset's, this plugin from its build (npm run build first).

const run = promisify(execFile);
let cluster: TestCluster;

const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;

/** kubectl with `input` on stdin; its stdout, or what it said on stderr when it failed. */
function kubectlInput(input: string, ...args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], (err, stdout, stderr) =>
      resolve({ ok: !err, out: err ? stderr : stdout }),
    );
    child.stdin!.end(input);
  });
}

const waldo = (preserve: 'root' | 'nested') => ({
  description: `preserve-unknown-properties ${preserve === 'root' ? 'at root' : 'in nested field'} for Testing`,
  ...(preserve === 'root' ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
  type: 'object',
  properties: {
    spec: {
      description: 'Specification of Waldo',
      type: 'object',
      ...(preserve === 'nested' ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
      properties: { dummy: { description: 'Dummy property.', type: 'object' } },
    },
    status: {
      description: 'Status of Waldo',
      type: 'object',
      properties: { bars: { description: 'List of Bars and their statuses.', type: 'array', items: { type: 'object' } } },
    },
  },
});

const schemaFoo = {
  description: 'Foo CRD for Testing',
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      description: 'Specification of Foo',
      properties: {
        bars: {
          description: 'List of Bars and their specs.',
          type: 'array',
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { description: 'Name of Bar.', type: 'string' },
              age: { description: 'Age of Bar.', type: 'string' },
              feeling: { description: 'Whether Bar is feeling great.', type: 'string', enum: ['Great', 'Down'] },
              bazs: { description: 'List of Bazs.', items: { type: 'string' }, type: 'array' },
            },
          },
        },
      },
    },
    status: {
      description: 'Status of Foo',
      type: 'object',
      properties: {
        bars: {
          description: 'List of Bars and their statuses.',
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { description: 'Name of Bar.', type: 'string' },
              available: { description: 'Whether the Bar is installed.', type: 'boolean' },
              quxType: { description: 'Indicates to external qux type.', pattern: 'in-tree|out-of-tree', type: 'string' },
            },
          },
        },
      },
    },
  },
};

function crd(group: string, kind: string, versions: string[], schema: object | undefined): CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        schema: { openAPIV3Schema: (schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as never },
      })),
    },
  };
}

async function definitions(): Promise<Record<string, Record<string, unknown>>> {
  return (JSON.parse(await kubectl('get', '--raw', '/openapi/v2')) as { definitions: Record<string, Record<string, unknown>> }).definitions;
}

/** The published definition without what the API server adds (as the conformance test drops it). */
function withoutDefaults(definition: Record<string, unknown>): Record<string, unknown> {
  const { 'x-kubernetes-group-version-kind': _gvk, properties, ...rest } = definition;
  const { metadata: _m, apiVersion: _a, kind: _k, ...own } = (properties ?? {}) as Record<string, unknown>;
  return Object.keys(own).length ? { ...rest, properties: own } : rest;
}

beforeAll(async () => {
  cluster = await startTestCluster({ logLevel: 'error' });
}, 60_000);
afterAll(async () => cluster?.stop());

describe('CRD definitions in /openapi/v2 and v3 (the CustomResourcePublishOpenAPI conformance tests)', () => {
  it('publish the schema as written', async () => {
    await cluster.client.create(RESOURCES.customresourcedefinitions, crd('foo.example.com', 'Foo', ['v1'], schemaFoo));
    const defs = await waitFor('the definition', async () => (await definitions())['com.example.foo.v1.Foo']);
    expect(withoutDefaults(defs)).toEqual(schemaFoo);
    expect(defs['x-kubernetes-group-version-kind']).toEqual([{ group: 'foo.example.com', version: 'v1', kind: 'Foo' }]);
  });

  it('let kubectl explain the custom resource and its fields (OpenAPI v3, as kubectl asks)', async () => {
    expect(await kubectl('explain', 'foos')).toMatch(
      /DESCRIPTION:.*Foo CRD for Testing.*FIELDS:.*apiVersion.*<string>.*APIVersion defines.*spec.*<Object>.*Specification of Foo/s,
    );
    // The conformance test also wants ObjectMeta's own field descriptions, which the API server publishes.
    expect(await kubectl('explain', 'foos.metadata')).toMatch(/DESCRIPTION:.*Standard object's metadata.*FIELDS:.*creationTimestamp.*<string>/s);
    expect(await kubectl('explain', 'foos.spec')).toMatch(/DESCRIPTION:.*Specification of Foo.*FIELDS:.*bars.*<\[\]Object>.*List of Bars and their specs/s);
    expect(await kubectl('explain', 'foos.spec.bars')).toMatch(
      /(FIELD|RESOURCE):.*bars.*<\[\]Object>.*DESCRIPTION:.*List of Bars and their specs.*FIELDS:.*bazs.*<\[\]string>.*List of Bazs.*name.*<string>.*Name of Bar/s,
    );
    await expect(kubectl('explain', 'foos.spec.bars2')).rejects.toThrow('field "bars2" does not exist');
  });

  it('refuse what the schema refuses through kubectl create and apply, in the words the conformance test looks for', async () => {
    const meta = '"kind":"Foo","apiVersion":"foo.example.com/v1","metadata":{"name":"test-foo"}';
    for (const verb of ['create', 'apply']) {
      expect(await kubectlInput(`{${meta},"spec":{"bars":[{"name":"test-bar"}]}}`, verb, '-n', 'default', '-f', '-')).toMatchObject({ ok: true });
      await kubectl('delete', '-n', 'default', 'foos', 'test-foo');
      const badEnum = await kubectlInput(`{${meta},"spec":{"bars":[{"name":"test-bar","feeling":"NonExistentValue"}]}}`, verb, '-n', 'default', '-f', '-');
      expect(badEnum.out).toContain('Unsupported value: "NonExistentValue"');
      const unknown = await kubectlInput(`{${meta},"spec":{"foo":true}}`, verb, '-n', 'default', '-f', '-');
      expect(unknown.out).toContain('unknown field "spec.foo"');
      const noName = await kubectlInput(`{${meta},"spec":{"bars":[{"age":"10"}]}}`, verb, '-n', 'default', '-f', '-');
      expect(noName.out).toContain('spec.bars[0].name: Required value');
    }
  });

  it('publish a version renamed under its new name only, and drop a version no longer served', async () => {
    await cluster.client.create(RESOURCES.customresourcedefinitions, crd('multi.example.com', 'Multi', ['v2', 'v3'], schemaFoo));
    await waitFor('both versions', async () => {
      const defs = await definitions();
      return defs['com.example.multi.v2.Multi'] && defs['com.example.multi.v3.Multi'];
    });
    const patch = '[{"op":"test","path":"/spec/versions/1/name","value":"v3"},{"op":"replace","path":"/spec/versions/1/name","value":"v4"}]';
    await kubectl('patch', 'crd', 'multis.multi.example.com', '--type=json', '-p', patch);
    const renamed = await waitFor('the renamed version', async () => {
      const defs = await definitions();
      return defs['com.example.multi.v4.Multi'] && !defs['com.example.multi.v3.Multi'] ? defs : undefined;
    });
    expect(withoutDefaults(renamed['com.example.multi.v2.Multi']!)).toEqual(schemaFoo);
    expect(withoutDefaults(renamed['com.example.multi.v4.Multi']!)).toEqual(schemaFoo);
    await kubectl('patch', 'crd', 'multis.multi.example.com', '--type=json', '-p', '[{"op":"replace","path":"/spec/versions/1/served","value":false}]');
    const unserved = await waitFor('the unserved version gone', async () => {
      const defs = await definitions();
      return defs['com.example.multi.v4.Multi'] ? undefined : defs;
    });
    expect(withoutDefaults(unserved['com.example.multi.v2.Multi']!)).toEqual(schemaFoo);
    await kubectl('delete', 'crd', 'multis.multi.example.com');
    await waitFor('the definitions gone', async () => !(await definitions())['com.example.multi.v2.Multi']);
  });

  it('let kubectl explain schemas preserving unknown fields, at the root and nested', async () => {
    await cluster.client.create(RESOURCES.customresourcedefinitions, crd('root.example.com', 'Root', ['v1'], waldo('root')));
    await cluster.client.create(RESOURCES.customresourcedefinitions, crd('nested.example.com', 'Nested', ['v1'], waldo('nested')));
    await waitFor('the definitions', async () => {
      const defs = await definitions();
      return defs['com.example.root.v1.Root'] && defs['com.example.nested.v1.Nested'];
    });
    for (const [kind, group] of [
      ['Root', 'root'],
      ['Nested', 'nested'],
    ]) {
      const meta = `"kind":"${kind}","apiVersion":"${group}.example.com/v1","metadata":{"name":"test-cr"}`;
      const body = kind === 'Root' ? `{${meta},"a":{"b":[{"c":"d"}]}}` : `{${meta},"spec":{"a":null,"b":[{"c":"d"}]}}`;
      for (const verb of ['create', 'apply']) {
        expect(await kubectlInput(body, verb, '-n', 'default', '-f', '-')).toMatchObject({ ok: true });
        await kubectl('delete', '-n', 'default', `${kind.toLowerCase()}s`, 'test-cr');
      }
    }
    expect(await kubectl('explain', 'roots')).toMatch(/KIND:.*Root/s);
    expect(await kubectl('explain', 'nesteds')).toMatch(/DESCRIPTION:.*preserve-unknown-properties in nested field for Testing/s);
  });

  it('publish type: object for a schema preserving unknown fields at the root', async () => {
    await cluster.client.create(RESOURCES.customresourcedefinitions, crd('empty.example.com', 'Empty', ['v1'], undefined));
    const defs = await waitFor('the definition', async () => (await definitions())['com.example.empty.v1.Empty']);
    expect(withoutDefaults(defs)).toEqual({ type: 'object' });
    const meta = '"kind":"Empty","apiVersion":"empty.example.com/v1","metadata":{"name":"test-cr"}';
    for (const verb of ['create', 'apply']) {
      expect(await kubectlInput(`{${meta},"a":{"b":[{"c":"d"}]}}`, verb, '-n', 'default', '-f', '-')).toMatchObject({ ok: true });
      await kubectl('delete', '-n', 'default', 'emptys', 'test-cr');
    }
    expect(await kubectl('explain', 'emptys')).toMatch(/DESCRIPTION:.*<empty>/s);
  });
});
