#!/usr/bin/env node
// Writes core/api/src/generated/api-facts.json: the facts of Kubernetes' built-in API types, generated
// from upstream's own definitions (docs/api-facts.md). Inputs are git snapshots of k8s.io/api and
// k8s.io/apimachinery read at one release tag; nothing of them is committed but the facts:
//
//   node scripts/generate-api-facts.mjs --api <dir> --apimachinery <dir> --apiextensions <dir> --aggregator <dir> --tag v0.36.3
//
// (or SKIFF_K8S_API_GIT / SKIFF_K8S_APIMACHINERY_GIT / SKIFF_K8S_API_TAG in the environment).
//
// From every generated.proto (parsed with protobufjs): packages, messages, fields (number, type,
// repeated, map) and the markers of a curated list. From the Go sources beside them: JSON names where
// they differ from the proto names, inlined and JSON-less fields, pointers and omitempty, `+enum` string
// types with their constants, which field holds which enum, and each package's GroupName. Comment prose never reaches the output: only marker
// lines (`// +key=value`) are read, and each kept value must have the shape its marker allows.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUTPUT = join(ROOT, 'core/api/src/generated/api-facts.json');

/** The upstream modules read, with the command-line flag and environment variable naming each one's git directory. */
export const MODULES = Object.freeze([
  { module: 'k8s.io/api', flag: '--api', env: 'SKIFF_K8S_API_GIT' },
  // testapigroup is apimachinery's own test fixture, not an API anybody serves.
  { module: 'k8s.io/apimachinery', flag: '--apimachinery', env: 'SKIFF_K8S_APIMACHINERY_GIT', exclude: /(^|\/)testapigroup\// },
  // CustomResourceDefinition and APIService live in their servers' own modules.
  { module: 'k8s.io/apiextensions-apiserver', flag: '--apiextensions', env: 'SKIFF_K8S_APIEXTENSIONS_GIT', exclude: /(^|\/)(test|examples)\// },
  { module: 'k8s.io/kube-aggregator', flag: '--aggregator', env: 'SKIFF_K8S_AGGREGATOR_GIT' },
]);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const IDENTIFIER_LIST = /^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The field markers kept, each with the shape its value must have and how it is written out. A marker
 * not listed here is left out (docs/api-facts.md says which and why).
 */
const FIELD_MARKERS = {
  optional: { flag: true, key: 'optional' },
  required: { flag: true, key: 'required' },
  listType: { value: /^(atomic|set|map)$/, key: 'listType' },
  listMapKey: { value: IDENTIFIER, key: 'listMapKeys', repeats: true },
  patchMergeKey: { value: IDENTIFIER, key: 'patchMergeKey' },
  patchStrategy: { value: /^[a-zA-Z]+(,[a-zA-Z]+)*$/, key: 'patchStrategy' },
  mapType: { value: /^(atomic|granular)$/, key: 'mapType' },
  structType: { value: /^(atomic|granular)$/, key: 'structType' },
  default: { value: /./, key: 'default', parse: 'default' },
  featureGate: { value: IDENTIFIER_LIST, key: 'featureGates', parse: 'list' },
  oneOf: { value: IDENTIFIER, key: 'oneOf' },
  zeroOrOneOf: { value: IDENTIFIER, key: 'zeroOrOneOf' },
  unionDiscriminator: { flag: true, key: 'unionDiscriminator' },
};

/** Message markers kept. `+protobuf.nullable=true` marks a named Go slice carried in a message's `items` field. */
const MESSAGE_MARKERS = {
  structType: { value: /^(atomic|granular)$/, key: 'structType' },
  union: { flag: true, key: 'union' },
  'k8s:supportsSubresource': { value: /^("\/[a-z]+"|\/[a-z]+)$/, key: 'supportsSubresources', repeats: true, parse: 'unquote' },
  'protobuf.nullable': { flag: true, key: 'sliceWrapper' },
};

/** Written in this order, whatever order the markers had. */
const FIELD_KEY_ORDER = [
  'name',
  'protoName',
  'number',
  'type',
  'repeated',
  'map',
  'inline',
  'notInJson',
  'pointer',
  'omitEmpty',
  'omitZero',
  'enum',
  ...new Set(Object.values(FIELD_MARKERS).map((marker) => marker.key)),
];
const MESSAGE_KEY_ORDER = ['package', ...new Set(Object.values(MESSAGE_MARKERS).map((marker) => marker.key)), 'fields'];

export class FactsError extends Error {}

/** `+key` and `+key=value` lines of a comment, in order. Everything else in the comment is prose and is dropped here. */
function markerLines(comment) {
  if (!comment) return [];
  const out = [];
  for (const line of comment.split('\n')) {
    const match = /^\+([A-Za-z][\w.:-]*)(?:=(.*))?$/.exec(line.trim());
    if (match) out.push({ key: match[1], value: match[2]?.trim() });
  }
  return out;
}

function readMarkers(comment, catalogue, where, resolveRef) {
  const out = {};
  for (const { key, value } of markerLines(comment)) {
    const marker = catalogue[key];
    if (!marker) continue;
    if (marker.flag) {
      if (value !== undefined && value !== 'true') throw new FactsError(`${where}: +${key} takes no value, found ${JSON.stringify(value)}`);
      out[marker.key] = true;
      continue;
    }
    if (value === undefined || !marker.value.test(value)) throw new FactsError(`${where}: +${key} has an unexpected value ${JSON.stringify(value ?? '')}`);
    const parsed = parseMarkerValue(marker.parse, value, where, resolveRef);
    if (marker.repeats) (out[marker.key] ??= []).push(parsed);
    else out[marker.key] = parsed;
  }
  return out;
}

function parseMarkerValue(kind, value, where, resolveRef) {
  switch (kind) {
    case 'list':
      return value.split(',');
    case 'unquote':
      return value.replace(/^"(.*)"$/, '$1');
    case 'default': {
      // A JSON literal, or ref(Constant) naming a Go constant of the same package.
      const ref = /^ref\(([A-Za-z_]\w*)\)$/.exec(value);
      if (ref) {
        const resolved = resolveRef(ref[1]);
        if (resolved === undefined) throw new FactsError(`${where}: +default=${value} names no constant of the package`);
        return resolved;
      }
      try {
        return JSON.parse(value);
      } catch {
        throw new FactsError(`${where}: +default=${value} is not a JSON value`);
      }
    }
    default:
      return value;
  }
}

// ---- Go sources: struct tags, +enum types and their constants ---------------------------------------

const GO_SKIP = /(_test\.go|_fuzz\.go|^generated\.pb\.go|^zz_generated\..*|_swagger_doc_generated\.go)$/;

export function isGoSource(path) {
  return path.endsWith('.go') && !GO_SKIP.test(posix.basename(path));
}

/** Go import aliases of one file → import path. */
function goImports(text) {
  const imports = new Map();
  const add = (alias, path) => imports.set(alias ?? path.slice(path.lastIndexOf('/') + 1), path);
  for (const block of text.matchAll(/^import \(\n([\s\S]*?)^\)/gm)) {
    for (const line of block[1].split('\n')) {
      const match = /^\s*(?:([A-Za-z_]\w*)\s+)?"([^"]+)"/.exec(line);
      if (match) add(match[1], match[2]);
    }
  }
  for (const match of text.matchAll(/^import (?:([A-Za-z_]\w*)\s+)?"([^"]+)"/gm)) add(match[1], match[2]);
  return imports;
}

/** The contiguous `//` lines right above line `index`. */
function commentAbove(lines, index) {
  const out = [];
  for (let i = index - 1; i >= 0 && /^\s*\/\//.test(lines[i]); i--) out.unshift(lines[i].replace(/^\s*\/\/\s?/, ''));
  return out.join('\n');
}

// A constant's value: a string (\x60 is Go's raw-string backquote), a number, a name, or a conversion `Type(…)`.
const GO_VALUE = String.raw`"(?:[^"\\]|\\.)*"|\x60[^\x60]*\x60|[\w.]+(?:\([^()]*\))?`;
const CONST_IN_BLOCK = new RegExp(String.raw`^\s+([A-Za-z_]\w*)(?:\s+([A-Za-z_][\w.]*))?\s*=\s*(${GO_VALUE})\s*(?:\/\/.*)?$`);
const CONST_SINGLE = new RegExp(String.raw`^const ([A-Za-z_]\w*)(?:\s+([A-Za-z_][\w.]*))?\s*=\s*(${GO_VALUE})\s*(?:\/\/.*)?$`);

/**
 * What one Go package says that its generated.proto does not: per struct, each protobuf-tagged field's
 * JSON tag and Go type; the named types (string, alias, or other; `+enum` or not); and the constants, as
 * unevaluated expressions (a literal, another constant, or a conversion `Type(…)`).
 */
function scanGoPackage(files) {
  const structs = new Map();
  const types = new Map();
  const constants = new Map();
  for (const { text } of files) {
    const lines = text.split('\n');
    const imports = goImports(text);
    let struct;
    let inConstBlock = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const typeDecl = /^type ([A-Za-z_]\w*) (?:(struct \{)|(= )?([\w.]+)\s*(?:\/\/.*)?$)/.exec(line);
      if (typeDecl) {
        const [, name, isStruct, isAlias, underlying] = typeDecl;
        if (isStruct) {
          // A type defined in two files under different build constraints: the tags of both count.
          struct = structs.get(name) ?? new Map();
          structs.set(name, struct);
        } else {
          const isEnum = markerLines(commentAbove(lines, i)).some((marker) => marker.key === 'enum');
          types.set(name, { alias: isAlias ? underlying : undefined, string: !isAlias && underlying === 'string', isEnum, imports });
        }
        continue;
      }
      if (struct) {
        if (/^\}/.test(line)) struct = undefined;
        else {
          const field = /^\s*(?:([A-Za-z_]\w*)\s+)?([^\s`]+)\s+`([^`]*)`/.exec(line);
          const protobufTag = field && /(?:^|\s)protobuf:"([^"]*)"/.exec(field[3]);
          if (protobufTag) {
            const parts = protobufTag[1].split(',');
            const number = Number(parts[1]);
            const protoName = parts.find((part) => part.startsWith('name='))?.slice(5);
            const jsonTag = /(?:^|\s)json:"([^"]*)"/.exec(field[3])?.[1];
            if (Number.isInteger(number)) struct.set(number, { protoName, jsonTag, goType: field[2], imports });
          }
        }
        continue;
      }
      if (/^const \($/.test(line)) inConstBlock = true;
      else if (inConstBlock && /^\)/.test(line)) inConstBlock = false;
      const constant = (inConstBlock ? CONST_IN_BLOCK : CONST_SINGLE).exec(line);
      if (constant) constants.set(constant[1], { type: constant[2], expr: constant[3], imports });
    }
  }
  return { structs, types, constants };
}

function parseGoLiteral(expr) {
  if (expr.startsWith('"')) {
    try {
      return JSON.parse(expr);
    } catch {
      return undefined; // an escape JSON lacks (\x41, \a): no constant the table needs is written so
    }
  }
  if (expr.startsWith('`')) return expr.slice(1, -1);
  if (/^0[xX][0-9a-fA-F]+$/.test(expr)) return parseInt(expr.slice(2), 16);
  if (/^0[oO]?[0-7]+$/.test(expr)) return parseInt(expr.replace(/^0[oO]?/, ''), 8);
  if (/^-?(0|[1-9]\d*)$/.test(expr)) return Number(expr);
  return undefined;
}

/**
 * Names resolved across the Go packages read: a type or constant named in package P (plain, or
 * `alias.Name` through the file's imports) is identified as `<proto package>.<Name>`; type aliases are
 * followed, constants evaluated (literals, references, conversions).
 */
function goResolver(goPackages, packageOfGoPath) {
  const locate = (packageName, name, imports) => {
    const qualified = /^([A-Za-z_]\w*)\.([A-Za-z_]\w*)$/.exec(name);
    if (!qualified) return IDENTIFIER.test(name) ? { packageName, name } : undefined;
    const target = packageOfGoPath.get(imports.get(qualified[1]));
    return target ? { packageName: target, name: qualified[2] } : undefined;
  };
  const canonicalType = (packageName, name, imports, depth = 0) => {
    const where = locate(packageName, name, imports);
    const type = where && goPackages.get(where.packageName)?.types.get(where.name);
    if (!type) return where && `${where.packageName}.${where.name}`;
    if (type.alias && depth < 8) return canonicalType(where.packageName, type.alias, type.imports, depth + 1);
    return `${where.packageName}.${where.name}`;
  };
  const constant = (packageName, name, imports, depth = 0) => {
    const where = locate(packageName, name, imports);
    const found = where && goPackages.get(where.packageName)?.constants.get(where.name);
    if (!found || depth > 8) return undefined;
    const evaluate = (expr) => {
      const literal = parseGoLiteral(expr);
      if (literal !== undefined) return { value: literal };
      const conversion = /^([\w.]+)\((.*)\)$/.exec(expr);
      if (conversion) {
        const inner = evaluate(conversion[2]);
        return inner && { value: inner.value, type: canonicalType(where.packageName, conversion[1], found.imports) };
      }
      return constant(where.packageName, expr, found.imports, depth + 1);
    };
    const result = evaluate(found.expr);
    if (!result) return undefined;
    return { value: result.value, type: found.type ? canonicalType(where.packageName, found.type, found.imports) : result.type };
  };
  const enums = new Map();
  for (const [packageName, go] of goPackages) {
    for (const [name, type] of go.types) if (type.isEnum && type.string) enums.set(`${packageName}.${name}`, new Set());
  }
  for (const [packageName, go] of goPackages) {
    for (const name of go.constants.keys()) {
      const result = constant(packageName, name, new Map());
      if (result?.type && enums.has(result.type)) enums.get(result.type).add(result.value);
    }
  }
  /** The enum a field of Go type `goType` holds (for a list or pointer, its items'), or undefined. */
  const enumOf = (packageName, goType, imports) => {
    const name = canonicalType(packageName, goType.replace(/^(\*|\[\])+/, ''), imports);
    return name && enums.has(name) ? name : undefined;
  };
  return { enums, enumOf, constant };
}

// ---- Assembly ---------------------------------------------------------------------------------------

function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function ordered(record, order) {
  const out = {};
  for (const key of order) if (record[key] !== undefined) out[key] = record[key];
  const unknown = Object.keys(record).filter((key) => !order.includes(key));
  if (unknown.length) throw new Error(`internal: no output order for ${unknown.join(', ')}`);
  return out;
}

/** A proto type as written out: a scalar's name, or a message's full name without the leading dot. */
function typeName(field, resolved) {
  return resolved ? resolved.fullName.replace(/^\./, '') : field;
}

function versionOf(path) {
  const last = path.slice(path.lastIndexOf('/') + 1);
  return /^v\d+((alpha|beta)\d+)?$/.test(last) ? last : undefined;
}

/**
 * The facts table from the files of each module at one tag:
 * `[{ module, tag, commit, protoFiles: [{ path, text }], goFiles: [{ path, text }] }]`, paths relative to the module.
 */
export function buildFacts(modules) {
  const root = new protobuf.Root();
  const packages = new Map();
  const goPackages = new Map();
  for (const { module, protoFiles, goFiles } of modules) {
    for (const { path, text } of protoFiles) {
      let parsed;
      try {
        parsed = protobuf.parse(text, root, { keepCase: true, alternateCommentMode: true });
      } catch (err) {
        throw new FactsError(`${module}/${path}: ${err.message}`);
      }
      const name = parsed.package;
      if (!name) throw new FactsError(`${module}/${path}: no package statement`);
      if (packages.has(name)) throw new FactsError(`${module}/${path}: package ${name} is defined twice`);
      const dir = posix.dirname(path);
      const goPackage = root.lookup(name)?.options?.go_package;
      if (goPackage !== undefined && !goPackage.startsWith(`${module}/`))
        throw new FactsError(`${module}/${path}: its go_package ${goPackage} is not in ${module} (are the git directories swapped?)`);
      const files = goFiles.filter((file) => posix.dirname(file.path) === dir);
      const group = files.map((file) => /^(?:const )?[ \t]*GroupName[ \t]*=[ \t]*"([^"]*)"/m.exec(file.text)?.[1]).find((value) => value !== undefined);
      packages.set(name, { module, path: dir, goPackage, group, version: group === undefined ? undefined : versionOf(dir) });
      goPackages.set(name, scanGoPackage(files));
    }
  }
  try {
    root.resolveAll();
  } catch (err) {
    throw new FactsError(`resolving types: ${err.message}`);
  }

  const packageOfGoPath = new Map([...packages].filter(([, info]) => info.goPackage).map(([name, info]) => [info.goPackage, name]));
  const go = goResolver(goPackages, packageOfGoPath);

  const messages = {};
  const stats = { messages: 0, fields: 0, goTagged: 0, renamed: 0, inline: 0, enumFields: 0 };
  for (const packageName of [...packages.keys()].sort(compare)) {
    const goSources = goPackages.get(packageName);
    const namespace = root.lookup(packageName);
    const types = Object.values(namespace.nested ?? {}).filter((nested) => nested instanceof protobuf.Type);
    for (const type of types.sort((a, b) => compare(a.name, b.name))) {
      const where = `${packageName}.${type.name}`;
      const goStruct = goSources.structs.get(type.name);
      const fields = [];
      for (const field of [...type.fieldsArray].sort((a, b) => a.id - b.id)) {
        const fieldWhere = `${where}.${field.name}`;
        const record = { name: field.name, number: field.id, type: typeName(field.type, field.resolvedType) };
        if (field.map) record.map = { key: field.keyType, value: record.type };
        else if (field.repeated) record.repeated = true;
        const goField = goStruct?.get(field.id);
        if (goField) {
          stats.goTagged++;
          if (goField.protoName !== undefined && goField.protoName !== field.name)
            throw new FactsError(`${fieldWhere}: the Go struct tag names field ${field.id} ${goField.protoName}`);
          const [jsonName, ...jsonOptions] = goField.jsonTag?.split(',') ?? [];
          if (goField.goType.startsWith('*')) record.pointer = true;
          if (jsonOptions.includes('omitempty')) record.omitEmpty = true;
          if (jsonOptions.includes('omitzero')) record.omitZero = true;
          if (jsonName === '-') record.notInJson = true;
          else if (jsonName === '' && jsonOptions.includes('inline')) {
            record.inline = true;
            stats.inline++;
          } else if (jsonName && jsonName !== field.name) {
            record.name = jsonName;
            record.protoName = field.name;
            stats.renamed++;
          }
          const enumName = go.enumOf(packageName, goField.goType, goField.imports);
          if (enumName) {
            record.enum = enumName;
            stats.enumFields++;
          }
        }
        Object.assign(
          record,
          readMarkers(field.comment, FIELD_MARKERS, fieldWhere, (name) => go.constant(packageName, name, new Map())?.value),
        );
        fields.push(ordered(record, FIELD_KEY_ORDER));
      }
      const names = new Set();
      for (const field of fields) {
        if (names.has(field.name)) throw new FactsError(`${where}: two fields named ${field.name}`);
        names.add(field.name);
      }
      const message = { package: packageName, ...readMarkers(type.comment, MESSAGE_MARKERS, where), fields };
      messages[`${packageName}.${type.name}`] = ordered(message, MESSAGE_KEY_ORDER);
      stats.messages++;
      stats.fields += fields.length;
    }
  }

  const enums = {};
  for (const [name, values] of [...go.enums].sort(([a], [b]) => compare(a, b))) {
    if (values.size === 0) throw new FactsError(`${name} is marked +enum but no constant of it was found`);
    enums[name] = [...values].sort(compare);
  }
  const packageTable = {};
  for (const [name, info] of [...packages].sort(([a], [b]) => compare(a, b)))
    packageTable[name] = ordered(info, ['module', 'path', 'goPackage', 'group', 'version']);
  const facts = {
    sources: modules.map(({ module, tag, commit }) => ({ module, tag, commit })).sort((a, b) => compare(a.module, b.module)),
    packages: packageTable,
    messages,
    enums,
  };
  return { facts, stats: { ...stats, packages: packages.size, enums: Object.keys(enums).length } };
}

// ---- Reading a tag from git, writing the table ------------------------------------------------------

function git(gitDir, args) {
  try {
    return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new FactsError(`git ${args.join(' ')} in ${gitDir}: ${String(err.stderr ?? err.message).trim()}`);
  }
}

/** A bare repository, or a clone whose .git is inside. */
function gitDirOf(path) {
  return existsSync(join(path, '.git')) ? join(path, '.git') : path;
}

/** The files one module holds at `tag` that the generator reads: every generated.proto, and the Go sources beside them. */
export function readModuleAtTag({ module, exclude }, gitDir, tag) {
  const commit = git(gitDir, ['rev-parse', '--verify', `${tag}^{commit}`]).trim();
  const paths = git(gitDir, ['ls-tree', '-r', '--name-only', commit]).split('\n').filter(Boolean);
  const protoPaths = paths.filter((path) => posix.basename(path) === 'generated.proto' && !exclude?.test(path)).sort(compare);
  if (protoPaths.length === 0) throw new FactsError(`${module} at ${tag} has no generated.proto files`);
  const dirs = new Set(protoPaths.map((path) => posix.dirname(path)));
  const goPaths = paths.filter((path) => dirs.has(posix.dirname(path)) && isGoSource(path)).sort(compare);
  const show = (path) => ({ path, text: git(gitDir, ['show', `${commit}:${path}`]) });
  return { module, tag, commit, protoFiles: protoPaths.map(show), goFiles: goPaths.map(show) };
}

/** The table as committed: formatted with the repository's Prettier settings (wherever it is written) so `npm run format:check` agrees. */
export async function formatFacts(facts) {
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(DEFAULT_OUTPUT)) ?? {};
  return prettier.format(JSON.stringify(facts), { ...config, parser: 'json' });
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (flag === '--help' || flag === '-h') options.help = true;
    else if ([...MODULES.flatMap((source) => [source.flag, `${source.flag}-tag`]), '--tag', '--out'].includes(flag)) {
      const value = inline ?? argv[++i];
      if (!value) throw new FactsError(`${flag} needs a value`);
      options[flag.slice(2)] = value;
    } else throw new FactsError(`unknown argument ${arg}`);
  }
  return options;
}

const USAGE = `usage: node scripts/generate-api-facts.mjs --api <dir> --apimachinery <dir> --apiextensions <dir> --aggregator <dir> --tag <v0.X.Y> [--out <file>]
  --api, --apimachinery, --apiextensions, --aggregator
                         git directories (bare, or a clone) of kubernetes/api, kubernetes/apimachinery,
                         kubernetes/apiextensions-apiserver and kubernetes/kube-aggregator; or SKIFF_K8S_API_GIT,
                         SKIFF_K8S_APIMACHINERY_GIT, SKIFF_K8S_APIEXTENSIONS_GIT and SKIFF_K8S_AGGREGATOR_GIT
  --tag                  the release tag to read in each, e.g. v0.36.3; or SKIFF_K8S_API_TAG
  --<module>-tag         another tag for one module (--aggregator-tag v0.36.2) when its snapshot lacks --tag
  --out                  where to write (default core/api/src/generated/api-facts.json)`;

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const tag = options.tag ?? process.env.SKIFF_K8S_API_TAG;
  const missing = [];
  const inputs = MODULES.map((source) => {
    const dir = options[source.flag.slice(2)] ?? process.env[source.env];
    if (!dir) missing.push(`${source.flag} (or ${source.env})`);
    return { source, dir };
  });
  if (!tag) missing.push('--tag (or SKIFF_K8S_API_TAG)');
  if (missing.length) throw new FactsError(`missing ${missing.join(', ')}\n${USAGE}`);
  const modules = inputs.map(({ source, dir }) => readModuleAtTag(source, gitDirOf(resolve(dir)), options[`${source.flag.slice(2)}-tag`] ?? tag));
  const { facts, stats } = buildFacts(modules);
  const out = resolve(options.out ?? DEFAULT_OUTPUT);
  const text = await formatFacts(facts);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  console.log(
    `${relative(process.cwd(), out)}: ${stats.packages} packages, ${stats.messages} messages, ${stats.fields} fields ` +
      `(${stats.goTagged} matched to Go struct tags: ${stats.renamed} renamed for JSON, ${stats.inline} inlined; ${stats.enumFields} hold an enum), ` +
      `${stats.enums} enums; ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err) => {
    if (err instanceof FactsError) console.error(`generate-api-facts: ${err.message}`);
    else console.error(err);
    process.exitCode = 1;
  });
}
