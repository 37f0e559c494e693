import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { request } from 'node:https';
import { parse } from 'yaml';
import { startSkiff, tempDir, type RunningSkiff } from './harness.js';

/**
 * "Nothing lost, nothing leaked": malformed requests sent as raw HTTPS to one real `skiff up`. Each must
 * get a 4xx Kubernetes Status (never a 500, a hang or a crash), the server must still serve afterwards,
 * and the store (every key, revision and event) must be exactly as it was.
 *
 * The suite is declared once, here, and run on each store by a test file of its own (`describeHostileInput`):
 * hostile-input.test.ts on LMDB, hostile-input-etcd.test.ts on etcd. Each gives the `skiff up` arguments that put
 * the store there and a dump of it read from outside the server (store-dump.ts, etcd-dump.ts).
 *
 * `--nodes 0` keeps the cluster quiet: with no kubelet there are no node leases, no pods and no events,
 * so any write seen in the store came from the request under test (a test below checks this).
 * Periodic compaction only drops revisions beyond the newest 10,000, so it does not write here either.
 */

const REQUEST_TIMEOUT_MS = 10_000;
/** How long a server that stopped answering after a case gets to recover before it is killed and restarted. */
const RECOVERY_MS = 30_000;
const MiB = 1024 * 1024;
const WRITE_CHUNK = 256 * 1024;
const EARLY_ANSWER_ABOVE = MiB;
const EARLY_ANSWER_WAIT_MS = 500;

const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';

/** Objects created before the baseline dump, for patches, updates and deletes to aim at. */
const TARGET_NAMESPACE = 'hostile';
const TARGET_LEASE = `/apis/coordination.k8s.io/v1/namespaces/${TARGET_NAMESPACE}/leases/hostile`;
const NAMESPACE = `/api/v1/namespaces/${TARGET_NAMESPACE}`;
const NAMESPACES = '/api/v1/namespaces';

interface HostileCase {
  group: string;
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  contentType?: string;
  body?: string | Buffer;
  /** The status Kubernetes gives, or the statuses it may give; '4xx' where it has no single answer. */
  expected: number | number[] | '4xx';
  /** What the Status message must say, where that is part of the contract. */
  message?: RegExp;
  /** Send the body with chunked transfer encoding and no Content-Length, so only reading it shows its size. */
  chunked?: boolean;
}

interface Answer {
  status?: number;
  body: string;
  /** A connection error, or no answer in time. */
  error?: string;
  ms: number;
}

interface CaseResult {
  result: string;
  case: string;
  expected: string;
  got: string;
  reason: string;
  message: string;
  serving: string;
  store: string;
}

// ---------------------------------------------------------------------------------------------------
// Bodies

const namespaceJson = (metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata, ...extra });

/** `n` levels of nested objects, built by repetition so 100,000 levels cost no recursion here. */
const jsonDeep = (n: number) => '{"a":'.repeat(n - 1) + '{"a":1}' + '}'.repeat(n - 1);
const yamlFlowDeep = (n: number) => '{a: '.repeat(n - 1) + '{a: 1}' + '}'.repeat(n - 1);
/** Block style indents each level by two more spaces: ~n² bytes, so only used up to 1,000 levels. */
function yamlBlockDeep(n: number, indent: number): string {
  let out = '';
  for (let level = 1; level <= n; level++) out += `\n${' '.repeat(indent + 2 * level)}a:${level === n ? ' 1' : ''}`;
  return out;
}
/** The value to put after `key:` at `indent`: block style up to 1,000 levels, flow style beyond. */
const yamlDeep = (n: number, indent: number) => (n <= 1_000 ? yamlBlockDeep(n, indent) : ` ${yamlFlowDeep(n)}`);

const utf8 = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

const LEVELS = [100, 1_000, 10_000, 100_000];
const DEPTH_MESSAGE = /nest|depth/i;

/**
 * Nesting in every free-form field and patch type. Levels count the nested value alone; the body around it
 * adds a few more, so even the 100-level cases are past the server's limit of 100.
 */
function deepCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  const strict = '?fieldValidation=Strict';
  for (const n of LEVELS) {
    const levels = n.toLocaleString('en-US');
    const deep = { group: 'deep nesting', expected: 400, message: DEPTH_MESSAGE } as const;
    const name = (field: string, format: string) => `deep-${field}-${format}-${n}`;
    // Creates with the nesting in a free-form field; JSON and YAML bodies.
    cases.push(
      {
        ...deep,
        name: `annotations, ${levels} levels, JSON`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: JSON_TYPE,
        body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${name('annotations', 'json')}","annotations":{"a":${jsonDeep(n)}}}}`,
      },
      {
        ...deep,
        name: `annotations, ${levels} levels, YAML`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: YAML_TYPE,
        body: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name('annotations', 'yaml')}\n  annotations:\n    a:${yamlDeep(n, 4)}\n`,
      },
      {
        ...deep,
        name: `managedFields, ${levels} levels, JSON`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: JSON_TYPE,
        body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${name('managedfields', 'json')}","managedFields":[{"manager":"hostile","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${jsonDeep(n)}}]}}`,
      },
      {
        ...deep,
        name: `managedFields, ${levels} levels, YAML`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: YAML_TYPE,
        body: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name('managedfields', 'yaml')}\n  managedFields:\n  - manager: hostile\n    operation: Update\n    apiVersion: v1\n    fieldsType: FieldsV1\n    fieldsV1:${yamlDeep(n, 4)}\n`,
      },
      {
        ...deep,
        name: `unknown field, ${levels} levels, JSON`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: JSON_TYPE,
        body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${name('unknown', 'json')}"},"spec":{"bogus":${jsonDeep(n)}}}`,
      },
      {
        ...deep,
        name: `unknown field, ${levels} levels, YAML`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: YAML_TYPE,
        body: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name('unknown', 'yaml')}\nspec:\n  bogus:${yamlDeep(n, 2)}\n`,
      },
      {
        ...deep,
        name: `unknown field of nested lists, ${levels} levels, JSON`,
        method: 'POST',
        path: NAMESPACES + strict,
        contentType: JSON_TYPE,
        body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${name('lists', 'json')}"},"spec":{"bogus":${'['.repeat(n)}${']'.repeat(n)}}}`,
      },
      {
        ...deep,
        name: `update with an unknown field, ${levels} levels, JSON`,
        method: 'PUT',
        path: NAMESPACE + strict,
        contentType: JSON_TYPE,
        body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${TARGET_NAMESPACE}"},"spec":{"bogus":${jsonDeep(n)}}}`,
      },
      // Patches of the existing namespace.
      {
        ...deep,
        name: `merge patch, ${levels} levels`,
        method: 'PATCH',
        path: NAMESPACE + strict,
        contentType: MERGE_PATCH,
        body: `{"metadata":{"labels":{"a":${jsonDeep(n)}}}}`,
      },
      {
        ...deep,
        name: `strategic-merge patch, ${levels} levels`,
        method: 'PATCH',
        path: NAMESPACE + strict,
        contentType: STRATEGIC_PATCH,
        body: `{"spec":{"bogus":${jsonDeep(n)}}}`,
      },
      {
        ...deep,
        name: `JSON patch, ${levels} levels`,
        method: 'PATCH',
        path: NAMESPACE + strict,
        contentType: JSON_PATCH,
        body: `[{"op":"add","path":"/metadata/annotations/a","value":${jsonDeep(n)}}]`,
      },
      {
        ...deep,
        name: `apply patch, ${levels} levels, JSON`,
        method: 'PATCH',
        path: `${NAMESPACE}${strict}&fieldManager=hostile-input`,
        contentType: APPLY_PATCH,
        body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${TARGET_NAMESPACE}"},"spec":{"bogus":${jsonDeep(n)}}}`,
      },
      {
        ...deep,
        name: `apply patch, ${levels} levels, YAML`,
        method: 'PATCH',
        path: `${NAMESPACE}${strict}&fieldManager=hostile-input`,
        contentType: APPLY_PATCH,
        body: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${TARGET_NAMESPACE}\nspec:\n  bogus:${yamlDeep(n, 2)}\n`,
      },
    );
  }
  return cases;
}

const LONG_NAME = 'a'.repeat(10_000);
const UTF8_REFUSED = [400, 422];
const validNamespace = (name: string) => namespaceJson({ name });
const leaseJson = (metadata: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: { holderIdentity: 'hostile-input' } });

const CASES: HostileCase[] = [
  // Bad names in URLs. A NUL byte can only travel percent-encoded: Node's client refuses a raw one.
  { group: 'URL name', name: 'GET pod named a%00b (NUL)', method: 'GET', path: '/api/v1/namespaces/default/pods/a%00b', expected: [400, 404] },
  { group: 'URL name', name: 'GET pod named %00 (only NUL)', method: 'GET', path: '/api/v1/namespaces/default/pods/%00', expected: [400, 404] },
  { group: 'URL name', name: 'GET namespace with a 10,000-character name', method: 'GET', path: `${NAMESPACES}/${LONG_NAME}`, expected: [400, 404] },
  { group: 'URL name', name: 'GET pod named .', method: 'GET', path: '/api/v1/namespaces/default/pods/.', expected: [400, 404] },
  { group: 'URL name', name: 'GET pod named ..', method: 'GET', path: '/api/v1/namespaces/default/pods/..', expected: [400, 404] },
  { group: 'URL name', name: 'GET pod named %2E%2E (encoded ..)', method: 'GET', path: '/api/v1/namespaces/default/pods/%2E%2E', expected: [400, 404] },
  { group: 'URL name', name: 'GET pod named a%2Fb (encoded slash)', method: 'GET', path: '/api/v1/namespaces/default/pods/a%2Fb', expected: [400, 404] },
  { group: 'URL name', name: 'GET pod named %FF (invalid UTF-8)', method: 'GET', path: '/api/v1/namespaces/default/pods/%FF', expected: [400, 404] },
  {
    group: 'URL name',
    name: 'GET pod named %ED%A0%80 (UTF-8 of a lone surrogate)',
    method: 'GET',
    path: '/api/v1/namespaces/default/pods/%ED%A0%80',
    expected: [400, 404],
  },
  {
    group: 'URL name',
    name: 'GET pod named %E0%A4%A (truncated escape)',
    method: 'GET',
    path: '/api/v1/namespaces/default/pods/%E0%A4%A',
    expected: [400, 404],
  },
  // Kubernetes's NamespaceLifecycle admission answers a create in a namespace that does not exist with 404
  // before validation looks at the name.
  {
    group: 'URL name',
    name: 'POST lease into namespace a%00b',
    method: 'POST',
    path: '/apis/coordination.k8s.io/v1/namespaces/a%00b/leases',
    contentType: JSON_TYPE,
    body: leaseJson({ name: 'x' }),
    expected: [400, 404],
  },
  {
    group: 'URL name',
    name: 'POST lease into namespace ..',
    method: 'POST',
    path: '/apis/coordination.k8s.io/v1/namespaces/../leases',
    contentType: JSON_TYPE,
    body: leaseJson({ name: 'x' }),
    expected: [400, 404],
  },
  {
    group: 'URL name',
    name: 'PUT namespace named .',
    method: 'PUT',
    path: `${NAMESPACES}/.`,
    contentType: JSON_TYPE,
    body: validNamespace('.'),
    expected: [400, 404],
  },
  {
    group: 'URL name',
    name: 'PUT namespace with a 10,000-character name',
    method: 'PUT',
    path: `${NAMESPACES}/${LONG_NAME}`,
    contentType: JSON_TYPE,
    body: validNamespace(LONG_NAME),
    expected: [400, 404, 422],
  },
  {
    group: 'URL name',
    name: 'PATCH namespace named a%2Fb',
    method: 'PATCH',
    path: `${NAMESPACES}/a%2Fb`,
    contentType: MERGE_PATCH,
    body: '{}',
    expected: [400, 404],
  },
  { group: 'URL name', name: 'DELETE namespace named ..', method: 'DELETE', path: `${NAMESPACES}/..`, expected: [400, 404] },
  {
    group: 'URL name',
    name: 'DELETE lease named %2E',
    method: 'DELETE',
    path: `/apis/coordination.k8s.io/v1/namespaces/${TARGET_NAMESPACE}/leases/%2E`,
    expected: [400, 404],
  },

  // Malformed JSON and YAML.
  {
    group: 'malformed body',
    name: 'truncated JSON',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"',
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'JSON with trailing garbage',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: `${validNamespace('trailing')}}}garbage`,
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'JSON with NaN',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"nan","generation":NaN}}',
    expected: 400,
  },
  { group: 'malformed body', name: 'JSON null', method: 'POST', path: NAMESPACES, contentType: JSON_TYPE, body: 'null', expected: 400 },
  { group: 'malformed body', name: 'JSON array instead of an object', method: 'POST', path: NAMESPACES, contentType: JSON_TYPE, body: '[]', expected: 400 },
  {
    group: 'malformed body',
    name: 'JSON string instead of an object',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: '"Namespace"',
    expected: 400,
  },
  { group: 'malformed body', name: 'empty body on create', method: 'POST', path: NAMESPACES, contentType: JSON_TYPE, body: '', expected: 400 },
  {
    group: 'malformed body',
    name: 'YAML with an unclosed flow mapping',
    method: 'POST',
    path: NAMESPACES,
    contentType: YAML_TYPE,
    body: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: x\n',
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'YAML with a tab for indentation',
    method: 'POST',
    path: NAMESPACES,
    contentType: YAML_TYPE,
    body: 'apiVersion: v1\nkind: Namespace\nmetadata:\n\tname: tabbed\n',
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'YAML with a duplicate key',
    method: 'POST',
    path: `${NAMESPACES}?fieldValidation=Strict`,
    contentType: YAML_TYPE,
    body: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dup-a\n  name: dup-b\n',
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'YAML alias bomb',
    method: 'POST',
    path: `${NAMESPACES}?fieldValidation=Strict`,
    contentType: YAML_TYPE,
    body: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bomb\nspec:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 9 }, (_, i) => `  a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`).join('\n')}\n`,
    expected: 400,
  },
  { group: 'malformed body', name: 'YAML plain scalar', method: 'POST', path: NAMESPACES, contentType: YAML_TYPE, body: 'just a string\n', expected: 400 },
  {
    group: 'malformed body',
    name: 'merge patch that is not JSON',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: MERGE_PATCH,
    body: '{"metadata":',
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'strategic-merge patch that is a list',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: STRATEGIC_PATCH,
    body: '[1,2]',
    expected: '4xx',
  },
  {
    group: 'malformed body',
    name: 'JSON patch that is an object',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: JSON_PATCH,
    body: '{"op":"add","path":"/metadata/labels/a","value":"b"}',
    expected: 400,
  },
  {
    group: 'malformed body',
    name: 'JSON patch with an unknown op',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: JSON_PATCH,
    body: '[{"op":"explode","path":"/metadata/labels"}]',
    expected: '4xx',
  },
  {
    group: 'malformed body',
    name: 'apply patch that is not YAML',
    method: 'PATCH',
    path: `${NAMESPACE}?fieldManager=hostile-input`,
    contentType: APPLY_PATCH,
    body: 'apiVersion: v1\nkind: [Namespace\n',
    expected: 400,
  },

  // Invalid UTF-8 and lone surrogates; JSON.stringify writes a lone surrogate as a \ud800 escape. Kubernetes
  // decodes them to U+FFFD and then rejects the name or label (422); refusing the body as malformed (400)
  // is as safe, so either passes. Bodies that are not text at all are 400.
  {
    group: 'UTF-8',
    name: 'name with a \\ud800 escape',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: validNamespace('a\ud800b'),
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'label value with a \\ud800 escape',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'surrogate-label', labels: { a: '\ud800' } }),
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'annotation key with a \\udc00 escape',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'surrogate-annotation', annotations: { 'a\udc00': 'b' } }),
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'name with raw invalid UTF-8 bytes',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: utf8('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a', [0xff, 0xfe], 'b"}}'),
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'label key with a raw truncated UTF-8 sequence',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: utf8('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bad-utf8-label","labels":{"a', [0xc3, 0x28], '":"b"}}}'),
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'YAML name with a \\ud800 escape',
    method: 'POST',
    path: NAMESPACES,
    contentType: YAML_TYPE,
    body: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "a\\ud800b"\n',
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'merge patch setting a label to a \\ud800 escape',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: MERGE_PATCH,
    body: JSON.stringify({ metadata: { labels: { a: '\ud800' } } }),
    expected: UTF8_REFUSED,
  },
  {
    group: 'UTF-8',
    name: 'binary garbage as JSON',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: Buffer.from([0x00, 0xff, 0x13, 0x37, 0xc0, 0x80, 0xfe, 0xed]),
    expected: 400,
  },
  {
    group: 'UTF-8',
    name: 'UTF-16 JSON with a byte-order mark',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(validNamespace('utf16'), 'utf16le')]),
    expected: 400,
  },

  // Huge label values and names in bodies.
  {
    group: 'huge values',
    name: 'label value of 64 characters',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'label-64', labels: { a: 'b'.repeat(64) } }),
    expected: 422,
  },
  {
    group: 'huge values',
    name: 'label value of 100,000 characters',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'label-100k', labels: { a: 'b'.repeat(100_000) } }),
    expected: 422,
  },
  {
    group: 'huge values',
    name: 'label key of 10,000 characters',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'label-key-10k', labels: { ['k'.repeat(10_000)]: 'v' } }),
    expected: 422,
  },
  {
    group: 'huge values',
    name: 'name of 10,000 characters',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: validNamespace(LONG_NAME),
    expected: 422,
  },
  {
    group: 'huge values',
    name: 'annotations of 300 KiB in total (limit 256 KiB)',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'annotations-300k', annotations: { a: 'b'.repeat(300 * 1024) } }),
    expected: 422,
  },
  {
    group: 'huge values',
    name: 'merge patch setting a 100,000-character label value',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: MERGE_PATCH,
    body: JSON.stringify({ metadata: { labels: { a: 'b'.repeat(100_000) } } }),
    expected: 422,
  },

  // NUL bytes in names, labels and annotations.
  { group: 'NUL', name: 'name a\\u0000b', method: 'POST', path: NAMESPACES, contentType: JSON_TYPE, body: validNamespace('a\u0000b'), expected: 422 },
  {
    group: 'NUL',
    name: 'label key with NUL',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'nul-label-key', labels: { 'a\u0000': 'b' } }),
    expected: 422,
  },
  {
    group: 'NUL',
    name: 'label value with NUL',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'nul-label-value', labels: { a: 'b\u0000' } }),
    expected: 422,
  },
  {
    group: 'NUL',
    name: 'annotation key with NUL',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'nul-annotation', annotations: { 'a\u0000b': 'c' } }),
    expected: 422,
  },
  {
    group: 'NUL',
    name: 'finalizer with NUL',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: namespaceJson({ name: 'nul-finalizer' }, { spec: { finalizers: ['a\u0000b'] } }),
    expected: 422,
  },
  {
    group: 'NUL',
    name: 'YAML name with a \\0 escape',
    method: 'POST',
    path: NAMESPACES,
    contentType: YAML_TYPE,
    body: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "nul\\0name"\n',
    expected: 422,
  },
  {
    group: 'NUL',
    name: 'lease whose metadata.namespace has a NUL',
    method: 'POST',
    path: `/apis/coordination.k8s.io/v1/namespaces/${TARGET_NAMESPACE}/leases`,
    contentType: JSON_TYPE,
    body: leaseJson({ name: 'nul-namespace', namespace: `${TARGET_NAMESPACE}\u0000` }),
    expected: 400,
  },
  {
    group: 'NUL',
    name: 'JSON patch adding a label with NUL',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: JSON_PATCH,
    body: JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { 'a\u0000': 'b' } }]),
    expected: 422,
  },

  // Content types the server does not speak.
  {
    group: 'content type',
    name: 'create as text/plain',
    method: 'POST',
    path: NAMESPACES,
    contentType: 'text/plain',
    body: validNamespace('text-plain'),
    expected: 415,
  },
  {
    group: 'content type',
    name: 'create as application/xml',
    method: 'POST',
    path: NAMESPACES,
    contentType: 'application/xml',
    body: '<Namespace><metadata><name>xml</name></metadata></Namespace>',
    expected: 415,
  },
  {
    group: 'content type',
    name: 'create as a bogus protobuf',
    method: 'POST',
    path: NAMESPACES,
    contentType: 'application/vnd.kubernetes.protobuf',
    body: Buffer.concat([Buffer.from('k8s\u0000'), Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x00, 0xde, 0xad])]),
    expected: 400,
    message: /^the request body is not valid protobuf: field runs past the end of its message/,
  },
  {
    group: 'content type',
    name: 'create as protobuf without the k8s magic',
    method: 'POST',
    path: NAMESPACES,
    contentType: 'application/vnd.kubernetes.protobuf',
    body: Buffer.from(namespaceJson({ name: 'not-protobuf' })),
    expected: 400,
    message: /does not start with the protobuf magic/,
  },
  {
    group: 'content type',
    name: 'create as multipart/form-data',
    method: 'POST',
    path: NAMESPACES,
    contentType: 'multipart/form-data; boundary=x',
    body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n',
    expected: 415,
  },
  {
    group: 'content type',
    name: 'create as a form',
    method: 'POST',
    path: NAMESPACES,
    contentType: 'application/x-www-form-urlencoded',
    body: 'metadata.name=form',
    expected: 415,
  },
  {
    group: 'content type',
    name: 'patch as application/json',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: JSON_TYPE,
    body: '{"metadata":{"labels":{"a":"b"}}}',
    expected: 415,
  },
  {
    group: 'content type',
    name: 'patch as text/plain',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: 'text/plain',
    body: '{"metadata":{"labels":{"a":"b"}}}',
    expected: 415,
  },

  // Bodies over the 3 MiB limit.
  {
    group: 'oversized',
    name: 'create of 3 MiB + 1 byte',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: padTo(3 * MiB + 1, 'oversized-create'),
    expected: 413,
  },
  {
    group: 'oversized',
    name: 'YAML create of 3.5 MiB',
    method: 'POST',
    path: NAMESPACES,
    contentType: YAML_TYPE,
    body: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: oversized-yaml\n  annotations:\n    a: ${'b'.repeat(3.5 * MiB)}\n`,
    expected: 413,
  },
  {
    group: 'oversized',
    name: 'update of 4 MiB',
    method: 'PUT',
    path: NAMESPACE,
    contentType: JSON_TYPE,
    body: padTo(4 * MiB, TARGET_NAMESPACE),
    expected: 413,
  },
  {
    group: 'oversized',
    name: 'merge patch of 5 MiB',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: MERGE_PATCH,
    body: JSON.stringify({ metadata: { annotations: { a: 'b'.repeat(5 * MiB) } } }),
    expected: 413,
  },
  {
    group: 'oversized',
    name: 'create of 4 MiB sent chunked (no Content-Length)',
    method: 'POST',
    path: NAMESPACES,
    contentType: JSON_TYPE,
    body: padTo(4 * MiB, 'oversized-chunked'),
    chunked: true,
    expected: 413,
  },
  {
    group: 'oversized',
    name: 'merge patch of 3 MiB + 1 byte sent chunked',
    method: 'PATCH',
    path: NAMESPACE,
    contentType: MERGE_PATCH,
    body: JSON.stringify({ metadata: { annotations: { a: 'b'.repeat(3 * MiB - 36) } } }),
    chunked: true,
    expected: 413,
  },
  {
    group: 'oversized',
    name: 'apply patch of 3 MiB + 1 byte',
    method: 'PATCH',
    path: `${NAMESPACE}?fieldManager=hostile-input`,
    contentType: APPLY_PATCH,
    body: padTo(3 * MiB + 1, TARGET_NAMESPACE),
    expected: 413,
  },

  // Query values that do not parse.
  { group: 'query', name: 'list with limit=abc', method: 'GET', path: `${NAMESPACES}?limit=abc`, expected: 400 },
  { group: 'query', name: 'list with limit=-1', method: 'GET', path: `${NAMESPACES}?limit=-1`, expected: 400 },
  { group: 'query', name: 'list with limit=1.5', method: 'GET', path: `${NAMESPACES}?limit=1.5`, expected: 400 },
  { group: 'query', name: 'list with limit=1e3 (Kubernetes parses a decimal integer)', method: 'GET', path: `${NAMESPACES}?limit=1e3`, expected: 400 },
  { group: 'query', name: 'list with limit=%00', method: 'GET', path: `${NAMESPACES}?limit=%00`, expected: 400 },
  { group: 'query', name: 'list with resourceVersion=abc', method: 'GET', path: `${NAMESPACES}?resourceVersion=abc`, expected: 400 },
  { group: 'query', name: 'get with resourceVersion=abc', method: 'GET', path: `${NAMESPACE}?resourceVersion=abc`, expected: 400 },
  { group: 'query', name: 'list with timeoutSeconds=abc', method: 'GET', path: `${NAMESPACES}?timeoutSeconds=abc`, expected: 400 },
  { group: 'query', name: 'watch with resourceVersion=abc', method: 'GET', path: `${NAMESPACES}?watch=true&resourceVersion=abc`, expected: 400 },
  { group: 'query', name: 'watch with resourceVersion=-1', method: 'GET', path: `${NAMESPACES}?watch=true&resourceVersion=-1`, expected: 400 },
  { group: 'query', name: 'watch with timeoutSeconds=abc', method: 'GET', path: `${NAMESPACES}?watch=true&timeoutSeconds=abc`, expected: 400 },
  { group: 'query', name: 'watch with timeoutSeconds=-5', method: 'GET', path: `${NAMESPACES}?watch=true&timeoutSeconds=-5`, expected: 400 },
  {
    group: 'query',
    name: 'create with fieldValidation=Bogus',
    method: 'POST',
    path: `${NAMESPACES}?fieldValidation=Bogus`,
    contentType: JSON_TYPE,
    body: validNamespace('query-field-validation'),
    expected: 400,
  },
  {
    group: 'query',
    name: 'update with fieldValidation=%00',
    method: 'PUT',
    path: `${NAMESPACE}?fieldValidation=%00`,
    contentType: JSON_TYPE,
    body: validNamespace(TARGET_NAMESPACE),
    expected: 400,
  },
  {
    group: 'query',
    name: 'patch with fieldValidation=Strictly',
    method: 'PATCH',
    path: `${NAMESPACE}?fieldValidation=Strictly`,
    contentType: MERGE_PATCH,
    body: '{"metadata":{"labels":{"a":"b"}}}',
    expected: 400,
  },
  {
    group: 'query',
    name: 'create with dryRun=Yes',
    method: 'POST',
    path: `${NAMESPACES}?dryRun=Yes`,
    contentType: JSON_TYPE,
    body: validNamespace('query-dry-run'),
    expected: 400,
  },
  { group: 'query', name: 'delete with dryRun=true', method: 'DELETE', path: `${TARGET_LEASE}?dryRun=true`, expected: 400 },
  { group: 'query', name: 'delete with propagationPolicy=Sideways', method: 'DELETE', path: `${TARGET_LEASE}?propagationPolicy=Sideways`, expected: 400 },
  { group: 'query', name: 'delete with propagationPolicy=%00', method: 'DELETE', path: `${TARGET_LEASE}?propagationPolicy=%00`, expected: 400 },
  {
    group: 'query',
    name: 'delete with a numeric propagationPolicy in the body',
    method: 'DELETE',
    path: TARGET_LEASE,
    contentType: JSON_TYPE,
    body: '{"propagationPolicy":42}',
    expected: 400,
  },
  { group: 'query', name: 'delete with gracePeriodSeconds=abc', method: 'DELETE', path: `${TARGET_LEASE}?gracePeriodSeconds=abc`, expected: 400 },

  ...deepCases(),
];

/** A namespace named `name` whose one annotation pads the JSON body to exactly `bytes` bytes. */
function padTo(bytes: number, name: string): string {
  const empty = namespaceJson({ name, annotations: { a: '' } });
  return namespaceJson({ name, annotations: { a: 'b'.repeat(bytes - empty.length) } });
}

// ---------------------------------------------------------------------------------------------------
// The cluster, the client and the checks

/** Where the cluster under test keeps its store, and how to read it from outside the server. */
export interface HostileInputStore {
  /** Named in the suite's title. */
  name: string;
  /**
   * The `skiff up` arguments that put the store there, beside `--data-dir` and `--nodes 0`. Asked for in the
   * suite's beforeAll, which runs after those the test file declared before calling `describeHostileInput`.
   */
  args(): string[];
  /** The store as sorted lines, one an entry (store-dump.ts's format): equal dumps mean an unchanged store. */
  dump(dataDir: string): Promise<string>;
}

/** One `skiff up`, and requests to it each on a connection of its own. */
class HostileTarget {
  private skiff!: RunningSkiff;
  private target!: { host: string; port: number; ca: Buffer; token: string };

  constructor(private readonly args: string[]) {}

  async start(): Promise<void> {
    this.skiff = await startSkiff(this.args);
    const config = parse(readFileSync(this.skiff.kubeconfig, 'utf8'));
    const url = new URL(this.skiff.server);
    this.target = {
      host: url.hostname,
      port: Number(url.port),
      ca: Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64'),
      token: config.users[0].user.token,
    };
  }

  async stop(): Promise<void> {
    await this.skiff?.stop();
  }

  /** One request on its own connection, answered within `timeoutMs` or reported as a hang. */
  send(method: string, path: string, contentType?: string, body?: string | Buffer, options: { chunked?: boolean; timeoutMs?: number } = {}): Promise<Answer> {
    const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    const started = performance.now();
    const { host, port, ca, token } = this.target;
    return new Promise((resolve) => {
      let status: number | undefined;
      let received = '';
      let settled = false;
      const finish = (error?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, body: received, error, ms: Math.round(performance.now() - started) });
        req.destroy();
      };
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}`, accept: JSON_TYPE };
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (body !== undefined && !options.chunked) headers['content-length'] = Buffer.byteLength(body);
      const req = request({ host, port, method, path, headers, ca, agent: false }, (res) => {
        status = res.statusCode;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (received += chunk));
        res.on('end', () => finish());
        res.on('error', (err) => finish(err.message));
      });
      const timer = setTimeout(
        () => finish(status === undefined ? `no answer within ${timeoutMs} ms` : `the body did not end within ${timeoutMs} ms`),
        timeoutMs,
      );
      req.on('error', (err) => finish(status === undefined ? err.message : undefined));
      writeBody(req, body, () => status !== undefined || settled).catch(() => undefined);
    });
  }

  async serving(): Promise<boolean> {
    const answer = await this.send('GET', '/api/v1/namespaces/default');
    return answer.status === 200;
  }

  /**
   * Makes sure the server answers after a case: waits for it to recover, and if it died or stays stuck,
   * restarts it on the same data dir (and store) so the later cases still run. Returns what happened, for the table.
   */
  async ensureServing(): Promise<string> {
    const ended = () => this.skiff.process.exitCode !== null || this.skiff.process.signalCode !== null;
    if (!ended()) {
      const deadline = Date.now() + RECOVERY_MS;
      while (Date.now() < deadline) {
        if (await this.serving()) return 'yes';
        if (ended()) break;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const died = ended();
    const how = died ? `CRASHED (exit ${this.skiff.process.exitCode ?? this.skiff.process.signalCode})` : `STUCK for ${RECOVERY_MS / 1000} s`;
    const lastLog = this.skiff.stderr().trim().split('\n').slice(-3).join(' | ');
    if (!died) {
      this.skiff.process.kill('SIGKILL');
      await this.skiff.stop();
    }
    await this.start();
    return `${how}, restarted${lastLog ? `; last log: ${lastLog.slice(0, 300)}` : ''}`;
  }
}

/**
 * Writes `body`, stopping once `answered` says so. A server answers 413 from the Content-Length alone and
 * then closes the connection; if the client is still writing, the close arrives as a reset that can
 * discard the answer before the client reads it (a race, so not something a case can assert). Like a
 * client sending `Expect: 100-continue`, a large body therefore waits briefly after the headers for an
 * early answer, then goes a chunk at a time.
 */
async function writeBody(req: ClientRequest, body: string | Buffer | undefined, answered: () => boolean): Promise<void> {
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
  if (bytes.length > EARLY_ANSWER_ABOVE) {
    req.flushHeaders();
    const deadline = Date.now() + EARLY_ANSWER_WAIT_MS;
    while (!answered() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }
  for (let offset = 0; offset < bytes.length && !answered(); offset += WRITE_CHUNK) {
    if (!req.write(bytes.subarray(offset, offset + WRITE_CHUNK))) await new Promise((r) => (req.once('drain', r), req.once('close', r)));
  }
  if (!answered()) req.end();
}

function expectedCodes(expected: HostileCase['expected']): (code: number) => boolean {
  if (expected === '4xx') return (code) => code >= 400 && code < 500;
  const codes = Array.isArray(expected) ? expected : [expected];
  return (code) => codes.includes(code);
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const describeExpected = (expected: HostileCase['expected']) => (Array.isArray(expected) ? expected.join('/') : String(expected));

/** The first line of the store diff between two dumps, for the table. */
function dumpDifference(before: string, after: string): string {
  const old = new Set(before.split('\n'));
  const now = new Set(after.split('\n'));
  const added = [...now].filter((line) => !old.has(line));
  const removed = [...old].filter((line) => !now.has(line));
  const example = added.find((line) => !line.startsWith('meta')) ?? added[0];
  const lost = removed.find((line) => !line.startsWith('meta')) ?? removed[0];
  return `CHANGED: +${added.length} -${removed.length}${example ? ` e.g. ${example}` : lost ? ` e.g. lost ${lost}` : ''}`;
}

/** Prints every case and what it got, one row each. */
function printResults(storeName: string, results: CaseResult[]): void {
  const columns = ['case', 'expected', 'got', 'reason', 'result', 'serving', 'store', 'message'] as const;
  const widths = columns.map((column) => Math.min(90, Math.max(column.length, ...results.map((row) => row[column].length))));
  // Control characters shown as \uXXXX escapes (JSON.stringify escapes exactly those, and quotes and backslashes).
  const printable = (cell: string) => JSON.stringify(cell).slice(1, -1).replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  const line = (cells: string[]) => `| ${cells.map((cell, i) => printable(cell).slice(0, widths[i]).padEnd(widths[i]!)).join(' | ')} |`;
  console.log(
    [
      `hostile input on ${storeName}: ${results.length} cases, ${results.filter((row) => row.result === 'pass').length} passed`,
      line([...columns]),
      line(widths.map((width) => '-'.repeat(width))),
      ...results.map((row) => line(columns.map((column) => row[column]))),
    ].join('\n'),
  );
}

/** Declares the suite against one `skiff up --nodes 0` whose store `store` says where to find. */
export function describeHostileInput(store: HostileInputStore): void {
  const dataDir = tempDir('hostile-input');
  const dump = () => store.dump(dataDir);
  let server: HostileTarget | undefined;
  let baseline: string;
  let lastDump: string;
  const quietDumps: string[] = [];
  const results: CaseResult[] = [];

  beforeAll(async () => {
    server = new HostileTarget(['--data-dir', dataDir, '--nodes', '0', ...store.args()]);
    await server.start();
    const namespace = await server.send('POST', NAMESPACES, JSON_TYPE, validNamespace(TARGET_NAMESPACE));
    expect(namespace.status, namespace.body).toBe(201);
    const lease = await server.send('POST', `/apis/coordination.k8s.io/v1/namespaces/${TARGET_NAMESPACE}/leases`, JSON_TYPE, leaseJson({ name: 'hostile' }));
    expect(lease.status, lease.body).toBe(201);
    quietDumps.push(await dump());
    await new Promise((r) => setTimeout(r, 5_000));
    quietDumps.push(await dump());
    baseline = lastDump = quietDumps[1]!;
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (results.length) printResults(store.name, results);
  });

  describe(`hostile input on ${store.name}`, () => {
    it(`has at least 60 cases (${CASES.length})`, () => {
      expect(CASES.length).toBeGreaterThanOrEqual(60);
      expect(new Set(CASES.map((c) => `${c.group}: ${c.name}`)).size).toBe(CASES.length);
    });

    it('the store does not change while nothing is sent (so every change below is the request under test)', () => {
      expect(quietDumps[1]).toBe(quietDumps[0]);
    });

    it('the dump holds the objects the cases aim at (so an unchanged dump means an unchanged store)', () => {
      expect(baseline).toMatch(/^meta revision=[1-9]/);
      expect(baseline).toMatch(new RegExp(`^object "/registry/namespaces/${TARGET_NAMESPACE}" rv=[1-9]\\d* sha256=[0-9a-f]{16}$`, 'm'));
      expect(baseline).toMatch(new RegExp(`^object "/registry/coordination.k8s.io/leases/${TARGET_NAMESPACE}/hostile" rv=[1-9]\\d* sha256=[0-9a-f]{16}$`, 'm'));
    });

    for (const c of CASES) {
      it(`${c.group}: ${c.name} → ${describeExpected(c.expected)}`, async () => {
        const answer = await server!.send(c.method, c.path, c.contentType, c.body, { chunked: c.chunked });
        const kubeStatus = parseJson(answer.body);
        const servingNote = await server!.ensureServing();
        const before = lastDump;
        const after = await dump();
        lastDump = after;

        const message = typeof kubeStatus?.message === 'string' ? kubeStatus.message : '';
        const problems = [
          answer.error ?? '',
          answer.status !== undefined && !expectedCodes(c.expected)(answer.status) ? `status ${answer.status}` : '',
          kubeStatus?.kind !== 'Status' ? 'not a Status' : '',
          kubeStatus?.kind === 'Status' && (kubeStatus.status !== 'Failure' || kubeStatus.code !== answer.status || !kubeStatus.reason || !message)
            ? 'incomplete Status'
            : '',
          c.message && !c.message.test(message) ? `message does not match ${c.message}` : '',
          servingNote === 'yes' ? '' : 'server stopped serving',
          after === before ? '' : 'store changed',
        ].filter(Boolean);
        results.push({
          result: problems.length ? `FAIL: ${problems.join(', ')}` : 'pass',
          case: `${c.group}: ${c.name}`,
          expected: describeExpected(c.expected),
          got: `${answer.status ?? '-'} in ${answer.ms} ms`,
          reason: kubeStatus?.kind !== 'Status' ? '-' : String(kubeStatus.reason ?? '-'),
          message: (message || answer.body.slice(0, 120)).replace(/\s+/g, ' ').slice(0, 160),
          serving: servingNote,
          store: after === before ? 'same' : dumpDifference(before, after),
        });

        // Soft: one case reports every way it went wrong, not just the first.
        expect.soft(answer.error, 'the server answered in time and the connection held').toBeUndefined();
        const answered = `HTTP ${answer.status} (body: ${answer.body.slice(0, 300)})`;
        if (c.expected === '4xx') expect.soft(answer.status, answered).toSatisfy(expectedCodes('4xx'));
        else expect.soft([c.expected].flat(), answered).toContain(answer.status);
        expect.soft(kubeStatus, 'a Kubernetes Status').toMatchObject({ kind: 'Status', status: 'Failure', code: answer.status });
        expect.soft(kubeStatus?.reason, 'Status reason').toEqual(expect.stringMatching(/\S/));
        expect.soft(kubeStatus?.message, 'Status message').toEqual(expect.stringMatching(/\S/));
        if (c.message) expect.soft(message).toMatch(c.message);
        expect.soft(servingNote, 'the server still serves GET /api/v1/namespaces/default').toBe('yes');
        expect.soft(after, 'the store dump is unchanged').toBe(before);
      });
    }

    it('after the whole batch the server serves and the store equals the baseline', async () => {
      expect(await server!.serving()).toBe(true);
      expect(await dump()).toBe(baseline);
    });
  });
}
