#!/usr/bin/env node
// Writes plugins/cri-containerd/src/generated/cri-api.json: the facts of the CRI v1 API (package runtime.v1:
// services, methods, messages, fields with their numbers and types, enums) generated from k8s.io/cri-api's
// api.proto at one release tag. Only names, numbers and types are written: protobufjs' JSON descriptor carries
// no comments, so none of upstream's prose reaches the repository.
//
//   node scripts/generate-cri-facts.mjs --cri-api <git dir> [--tag v0.36.3]
//
// (or SKIFF_CRI_API_GIT / SKIFF_CRI_API_TAG in the environment). The git dir is a snapshot of
// github.com/kubernetes/cri-api; it is an input, never committed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = join(ROOT, 'plugins/cri-containerd/src/generated/cri-api.json');
const PROTO_PATH = 'pkg/apis/runtime/v1/api.proto';

function flag(name, env, fallback) {
  const at = process.argv.indexOf(name);
  if (at >= 0 && process.argv[at + 1]) return process.argv[at + 1];
  return process.env[env] ?? fallback;
}

const gitDir = flag('--cri-api', 'SKIFF_CRI_API_GIT');
const tag = flag('--tag', 'SKIFF_CRI_API_TAG', 'v0.36.3');
if (!gitDir) {
  console.error('usage: node scripts/generate-cri-facts.mjs --cri-api <git dir of k8s.io/cri-api> [--tag v0.36.3]');
  process.exit(1);
}

const source = execFileSync('git', ['--git-dir', gitDir, 'show', `${tag}:${PROTO_PATH}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
const { root } = protobuf.parse(source, { keepCase: true, alternateCommentMode: false });
const descriptor = root.toJSON({ keepComments: false });
const runtime = descriptor.nested.runtime.nested.v1;
delete runtime.options;
const facts = { source: `k8s.io/cri-api@${tag} ${PROTO_PATH}`, package: 'runtime.v1', nested: runtime.nested };
mkdirSync(dirname(OUTPUT), { recursive: true });
writeFileSync(OUTPUT, `${JSON.stringify(facts, null, 1)}\n`);
const counts = Object.values(runtime.nested).reduce(
  (sum, item) => ({
    services: sum.services + (item.methods ? 1 : 0),
    messages: sum.messages + (item.fields ? 1 : 0),
    enums: sum.enums + (item.values ? 1 : 0),
  }),
  { services: 0, messages: 0, enums: 0 },
);
console.log(`wrote ${OUTPUT}: ${counts.services} services, ${counts.messages} messages, ${counts.enums} enums (${facts.source})`);
