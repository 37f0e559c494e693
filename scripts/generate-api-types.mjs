#!/usr/bin/env node
// Writes core/api/src/generated/types.ts and core/api/src/generated/resources.ts from the API facts
// (core/api/src/generated/api-facts.json) and the table of served resources beside them
// (api-resources-1.36.txt). Deterministic: the same inputs write the same bytes; `--check` fails when the
// committed files differ from what the inputs write (a unit test runs it).
//
//   node scripts/generate-api-types.mjs [--check]
//
// What is written, and the choices made (docs/api-facts.md says the same for readers):
// - one interface per message reachable from a served kind, its list, and the few subresource messages
//   Skiff serves from other packages (EXTRA_MESSAGES); names are the message's short name, and where two
//   included messages share one, the core/v1 or apimachinery one keeps it and the others are prefixed with
//   their group and version as Go code imports them (`EventsV1Event`, `RbacV1Subject`);
// - a field is required when the facts mark it required or call it neither optional nor omitempty (the rule
//   upstream's OpenAPI documents use), and so is a `spec` or `template` held by value (not a pointer) whose
//   message has a required field: Go reads a missing struct as its zero value, whose empty required field validation
//   refuses, so every object the server accepted has it (a Pod's spec, a Deployment's template); a kind's or
//   list's `metadata` is always present, since the API server sets it on every object it returns;
// - `+enum` strings are unions of their values that still admit any string (validation reads objects
//   as clients sent them, unknown values included, and a newer server may add values); Time, MicroTime and Duration are strings (a Time held by value may be null: Go writes a zero one so); Quantity is
//   `Quantity` (string or number); IntOrString is `number | string`; RawExtension and JSON are `unknown`;
//   FieldsV1 is a plain object; inlined members (TypeMeta) are written as the message's own fields;
// - a served kind extends KubeObject (objects may carry fields the facts do not know, such as a newer
//   server's), so every kind can be handed to generic code.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const GENERATED = join(ROOT, 'core/api/src/generated');
export const OUTPUTS = Object.freeze({ types: join(GENERATED, 'types.ts'), resources: join(GENERATED, 'resources.ts') });

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Messages that are JSON scalars or free-form values rather than objects. */
const SCALAR_MESSAGES = Object.freeze({
  [`${META}.Time`]: 'string',
  [`${META}.MicroTime`]: 'string',
  [`${META}.Duration`]: 'string',
  [`${META}.FieldsV1`]: 'Record<string, unknown>',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'Quantity',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'number | string',
  'k8s.io.apimachinery.pkg.runtime.RawExtension': 'unknown',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON': 'unknown',
  // Go structs with JSON forms of their own: a schema or a list of schemas, a boolean or a schema, a schema or names.
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray': 'JSONSchemaProps | JSONSchemaProps[]',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool': 'boolean | JSONSchemaProps',
  'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray': 'JSONSchemaProps | string[]',
});
const TIMES = Object.freeze([`${META}.Time`, `${META}.MicroTime`]);
const SCALARS = Object.freeze({ string: 'string', bytes: 'string', bool: 'boolean', int32: 'number', int64: 'number', double: 'number', float: 'number' });
/** Messages Skiff serves as subresources or request bodies from packages no served kind lives in. */
const EXTRA_MESSAGES = Object.freeze([
  'k8s.io.api.autoscaling.v1.Scale',
  'k8s.io.api.authentication.v1.TokenRequest',
  'k8s.io.api.policy.v1.Eviction',
  'k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler',
  'k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerList',
  `${META}.DeleteOptions`,
  `${META}.WatchEvent`,
  `${META}.APIResourceList`,
  `${META}.APIGroupList`,
  `${META}.APIVersions`,
  `${META}.Table`,
  `${META}.PartialObjectMetadata`,
  `${META}.PartialObjectMetadataList`,
]);

/** The served resources: `name | short names | group/version | namespaced | kind | categories`. */
export function readServedResources(text) {
  const rows = [];
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, shortNames, groupVersion, namespaced, kind, categories] = line.split(' | ').map((cell) => cell.trim());
    const slash = groupVersion.indexOf('/');
    const group = slash < 0 ? '' : groupVersion.slice(0, slash);
    const version = slash < 0 ? groupVersion : groupVersion.slice(slash + 1);
    const list = (cell) => (!cell || cell === '-' ? [] : cell.split(','));
    rows.push({ resource: name, shortNames: list(shortNames), group, version, namespaced: namespaced === 'true', kind, categories: list(categories) });
  }
  return rows;
}

const pascal = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function packageOf(facts, group, version) {
  const entry = Object.entries(facts.packages).find(([, pkg]) => pkg.group === group && pkg.version === version);
  if (!entry) throw new Error(`no API package for ${group || 'core'}/${version}`);
  return entry[0];
}

/** The prefix that tells apart messages sharing a short name: the group's first label and the version (`RbacV1`). */
function qualifier(facts, message) {
  const pkg = facts.packages[facts.messages[message].package];
  const label = (pkg.group ?? pkg.path.split('/').at(-2) ?? 'Meta').split('.')[0] || 'Core';
  return `${pascal(label.replace(/[^A-Za-z0-9]/g, ''))}${pascal(pkg.version ?? '')}`;
}

/**
 * Who keeps a shared short name: a served kind, then a request body Skiff serves (EXTRA_MESSAGES), then core/v1,
 * then apimachinery, then a served kind's package.
 */
function rank(facts, message, servedMessages) {
  const pkg = facts.messages[message].package;
  const servedPackages = new Set([...servedMessages.keys()].map((served) => facts.messages[served].package));
  if (servedMessages.has(message)) return pkg === 'k8s.io.api.core.v1' ? 0 : 1;
  if (EXTRA_MESSAGES.includes(message)) return 2;
  if (pkg === 'k8s.io.api.core.v1') return 3;
  if (pkg.startsWith('k8s.io.apimachinery.')) return 4;
  if (servedPackages.has(pkg)) return 5;
  return 6;
}

export function generate(facts, served) {
  const kinds = new Map(); // message → served rows
  for (const row of served) {
    const message = `${packageOf(facts, row.group, row.version)}.${row.kind}`;
    if (!facts.messages[message]) throw new Error(`the facts have no message ${message} for ${row.resource}`);
    kinds.set(message, [...(kinds.get(message) ?? []), row]);
  }
  const roots = [...kinds.keys()].flatMap((message) => [message, `${message}List`]).concat(EXTRA_MESSAGES);
  const topLevel = new Set(roots.filter((message) => facts.messages[message]));
  const included = new Set();
  const visit = (message) => {
    if (included.has(message) || SCALAR_MESSAGES[message]) return;
    const facts_ = facts.messages[message];
    if (!facts_) throw new Error(`the facts have no message ${message}`);
    included.add(message);
    for (const field of facts_.fields) {
      const type = field.map ? field.map.value : field.type;
      if (!SCALARS[type]) visit(type);
    }
  };
  for (const message of topLevel) visit(message);

  // Names: the short name, unless two included messages share it.
  const byShort = new Map();
  for (const message of included) {
    const short = message.slice(message.lastIndexOf('.') + 1);
    byShort.set(short, [...(byShort.get(short) ?? []), message]);
  }
  const names = new Map();
  for (const [short, messages] of byShort) {
    if (messages.length === 1) {
      names.set(messages[0], short);
      continue;
    }
    const ranked = [...messages].sort((a, b) => rank(facts, a, kinds) - rank(facts, b, kinds) || a.localeCompare(b));
    const best = rank(facts, ranked[0], kinds);
    const keepsName = best < 6 && rank(facts, ranked[1], kinds) > best ? ranked[0] : undefined;
    for (const message of messages) names.set(message, message === keepsName ? short : `${qualifier(facts, message)}${short}`);
  }
  const taken = new Set();
  for (const [message, name] of names) {
    if (taken.has(name)) throw new Error(`two messages would be named ${name} (${message})`);
    taken.add(name);
  }

  const tsType = (type) => SCALARS[type] ?? SCALAR_MESSAGES[type] ?? names.get(type);
  const enumType = (name) => [...facts.enums[name].map((value) => JSON.stringify(value)), '(string & {})'].join(' | ');
  const fieldsOf = (message, seen = []) => {
    const out = [];
    for (const field of facts.messages[message].fields) {
      if (field.notInJson) continue;
      if (field.inline) {
        if (!seen.includes(field.type)) out.push(...fieldsOf(field.type, [...seen, message]));
        continue;
      }
      out.push(field);
    }
    return out;
  };
  const isRequired = (field) => field.required || !(field.optional || field.omitEmpty);
  const isStructValue = (field) =>
    (field.name === 'spec' || field.name === 'template') &&
    !field.pointer &&
    !field.repeated &&
    !field.map &&
    !SCALARS[field.type] &&
    !SCALAR_MESSAGES[field.type];
  const isPresent = (field) => isRequired(field) || (isStructValue(field) && facts.messages[field.type].fields.some(isPresent));
  const property = (field, isTopLevel) => {
    let value;
    if (field.map) value = `Record<string, ${field.map.value === 'string' && field.enum ? enumType(field.enum) : tsType(field.map.value)}>`;
    else {
      const item = field.enum && facts.enums[field.enum] ? enumType(field.enum) : tsType(field.type);
      value = field.repeated ? (item.includes(' ') ? `(${item})[]` : `${item}[]`) : item;
      // Go writes a zero Time held by value as null (a pointer is left out instead).
      if (TIMES.includes(field.type) && !field.pointer && !field.repeated) value = `${item} | null`;
    }
    const required = (isTopLevel && field.name === 'metadata') || isPresent(field);
    const key = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(field.name) ? field.name : JSON.stringify(field.name);
    return `  ${key}${required ? '' : '?'}: ${value};`;
  };

  const ordered = [...included].sort((a, b) => names.get(a).localeCompare(names.get(b)));
  const lines = [
    '// Generated by scripts/generate-api-types.mjs from api-facts.json and api-resources-1.36.txt: do not edit.',
    '// One interface per API message a served kind reaches (docs/api-facts.md says how names and optional fields are chosen).',
    "import type { KubeObject, Quantity } from '../types.js';",
    '',
  ];
  for (const message of ordered) {
    const name = names.get(message);
    const facts_ = facts.messages[message];
    const isTopLevel = topLevel.has(message);
    const fields = fieldsOf(message);
    const isObject = isTopLevel && fields.some((field) => field.name === 'metadata' && field.type === `${META}.ObjectMeta`);
    lines.push(`/** ${message.replace(/^k8s\.io\./, '')} */`);
    if (facts_.sliceWrapper) {
      const items = facts_.fields.find((field) => field.name === 'items');
      lines.push(`export type ${name} = ${tsType(items.type)}[];`, '');
      continue;
    }
    if (fields.length === 0 && !isTopLevel) {
      // A message with no fields is an empty JSON object (`status: {}` turns a CRD's status subresource on).
      lines.push(`export type ${name} = Record<string, never>;`, '');
      continue;
    }
    lines.push(`export interface ${name}${isObject ? ' extends KubeObject' : ''} {`);
    // Go's TypeMeta is not in the proto messages; every top-level object carries it in JSON.
    if (isTopLevel && !isObject) lines.push('  apiVersion?: string;', '  kind?: string;');
    for (const field of fields) lines.push(property(field, isTopLevel));
    lines.push('}', '');
  }
  // The TypeScript type of each served resource, keyed as kubectl names it.
  lines.push(
    '/**',
    ' * The type of each served resource, keyed as kubectl names a resource: `<plural>` for the core group,',
    ' * `<plural>.<group>` otherwise. A package serving a kind of its own adds it by declaration merging',
    " * (`declare module '@skiff/api' { interface ResourceTypes { 'widgets.example.com': Widget } }`).",
    ' */',
    'export interface ResourceTypes {',
  );
  for (const [message, rows] of [...kinds].sort(([a], [b]) => a.localeCompare(b)))
    for (const row of rows) lines.push(`  ${JSON.stringify(row.group ? `${row.resource}.${row.group}` : row.resource)}: ${names.get(message)};`);
  lines.push('}', '');
  const types = lines.join('\n');

  // The coordinates of each served resource.
  const keyCount = new Map();
  for (const row of served) keyCount.set(row.resource, (keyCount.get(row.resource) ?? 0) + 1);
  const resourceLines = [
    '// Generated by scripts/generate-api-types.mjs from api-resources-1.36.txt: do not edit.',
    "import type { ResourceType } from '../resource.js';",
    '',
    '/**',
    ' * Where each built-in resource is served: group, version, plural, kind, scope. Keyed by the plural; where',
    ' * two groups serve the same plural (events), the core one keeps it and the other is `<plural>.<group>`.',
    ' */',
    'export const RESOURCES = Object.freeze({',
  ];
  for (const row of served) {
    const key = keyCount.get(row.resource) > 1 && row.group ? `${row.resource}.${row.group}` : row.resource;
    const quotedKey = /^[a-z]+$/.test(key) ? key : JSON.stringify(key);
    resourceLines.push(
      `  ${quotedKey}: { group: ${JSON.stringify(row.group)}, version: ${JSON.stringify(row.version)}, resource: ${JSON.stringify(row.resource)}, kind: ${JSON.stringify(row.kind)}, namespaced: ${row.namespaced} },`,
    );
  }
  resourceLines.push('} as const satisfies Record<string, ResourceType>);', '');
  resourceLines.push(
    '/** The short names and categories upstream gives each built-in resource, keyed as kubectl names it (`deployments.apps`). */',
    'export const BUILTIN_NAMES: Readonly<Record<string, { readonly shortNames?: readonly string[]; readonly categories?: readonly string[] }>> = Object.freeze({',
  );
  for (const row of served) {
    if (!row.shortNames.length && !row.categories.length) continue;
    const names = { ...(row.shortNames.length ? { shortNames: row.shortNames } : {}), ...(row.categories.length ? { categories: row.categories } : {}) };
    resourceLines.push(`  ${JSON.stringify(row.group ? `${row.resource}.${row.group}` : row.resource)}: ${JSON.stringify(names)},`);
  }
  resourceLines.push('});', '');
  return { types, resources: resourceLines.join('\n') };
}

/** What the generator writes for the committed inputs, formatted as the repository formats TypeScript. */
export async function generatedFiles() {
  const facts = JSON.parse(readFileSync(join(GENERATED, 'api-facts.json'), 'utf8'));
  const served = readServedResources(readFileSync(join(GENERATED, 'api-resources-1.36.txt'), 'utf8'));
  const output = generate(facts, served);
  for (const [key, path] of Object.entries(OUTPUTS))
    output[key] = await prettier.format(output[key], { ...(await prettier.resolveConfig(path)), filepath: path });
  return output;
}

async function main() {
  const output = await generatedFiles();
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [key, path] of Object.entries(OUTPUTS)) {
    if (check) {
      const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
      if (current !== output[key]) {
        console.error(`${path} is not what scripts/generate-api-types.mjs writes: run it`);
        stale = true;
      }
    } else writeFileSync(path, output[key]);
  }
  if (stale) process.exit(1);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
