#!/usr/bin/env node
// Writes plugins/store-etcd/src/generated/etcd-api.json: the facts of etcd's v3 gRPC API (packages etcdserverpb,
// mvccpb and authpb: services, methods, messages, fields with their numbers and types, enums) generated from
// etcd's own .proto files at one release tag. Only names, numbers and types are written: protobufjs' JSON
// descriptor carries no comments, and every option (gogoproto, grpc-gateway) is dropped.
//
//   node scripts/generate-etcd-facts.mjs --etcd <git dir> [--tag v3.4.23]
//
// (or SKIFF_ETCD_GIT / SKIFF_ETCD_TAG in the environment). The git dir is a snapshot of github.com/etcd-io/etcd;
// it is an input, never committed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import protobuf from 'protobufjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = join(ROOT, 'plugins/store-etcd/src/generated/etcd-api.json');
const PROTO_PATHS = ['mvcc/mvccpb/kv.proto', 'auth/authpb/auth.proto', 'etcdserver/etcdserverpb/rpc.proto'];

function flag(name, env, fallback) {
  const at = process.argv.indexOf(name);
  if (at >= 0 && process.argv[at + 1]) return process.argv[at + 1];
  return process.env[env] ?? fallback;
}

const gitDir = flag('--etcd', 'SKIFF_ETCD_GIT');
const tag = flag('--tag', 'SKIFF_ETCD_TAG', 'v3.4.23');
if (!gitDir) {
  console.error('usage: node scripts/generate-etcd-facts.mjs --etcd <git dir of github.com/etcd-io/etcd> [--tag v3.4.23]');
  process.exit(1);
}

const root = new protobuf.Root();
for (const path of PROTO_PATHS) {
  const source = execFileSync('git', ['--git-dir', gitDir, 'show', `${tag}:${path}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
  protobuf.parse(source, root, { keepCase: true, alternateCommentMode: false });
}
const descriptor = root.toJSON({ keepComments: false });

/** Drops every `options` entry (gogoproto and grpc-gateway annotations are not facts the client needs). */
function withoutOptions(node) {
  if (Array.isArray(node)) return node.map(withoutOptions);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'options' && key !== 'parsedOptions')
      .map(([key, value]) => [key, withoutOptions(value)]),
  );
}

const packages = ['etcdserverpb', 'mvccpb', 'authpb'];
const nested = Object.fromEntries(packages.map((name) => [name, withoutOptions(descriptor.nested[name])]));
const facts = { source: `go.etcd.io/etcd@${tag} ${PROTO_PATHS.join(' ')}`, nested };
mkdirSync(dirname(OUTPUT), { recursive: true });
writeFileSync(OUTPUT, await prettier.format(JSON.stringify(facts), { ...(await prettier.resolveConfig(OUTPUT)), filepath: OUTPUT }));
const services = Object.values(nested.etcdserverpb.nested).filter((item) => item.methods).length;
console.log(`wrote ${OUTPUT}: ${services} services (${facts.source})`);
