#!/usr/bin/env node
// The default RBAC objects kube-apiserver bootstraps (roles, cluster roles and their bindings) are facts of the API:
// this script reads them from upstream's bootstrap-policy test fixtures in a Kubernetes source tree and writes them,
// reduced to what the objects hold (no creationTimestamp), to @skiff/plugin-authz-rbac's generated data.
//
//   node scripts/generate-rbac-bootstrap.mjs <git dir of a kubernetes tree> [ref]
//
// e.g. the mirror the `fetch` tool brings for github:chengsir22/kubernetes-1.28.7 (v1.28.7 with vendor/).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';

const [gitDir, ref = 'HEAD'] = process.argv.slice(2);
if (!gitDir) {
  console.error('usage: node scripts/generate-rbac-bootstrap.mjs <kubernetes git dir> [ref]');
  process.exit(2);
}
const FIXTURES = 'plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata';
const read = (name) =>
  parse(execFileSync('git', ['--git-dir', gitDir, 'show', `${ref}:${FIXTURES}/${name}.yaml`], { encoding: 'utf8', maxBuffer: 64 << 20 })).items;

function clean(object) {
  const { creationTimestamp: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

const data = {
  clusterRoles: [...read('cluster-roles'), ...read('controller-roles')].map(clean),
  clusterRoleBindings: [...read('cluster-role-bindings'), ...read('controller-role-bindings')].map(clean),
  roles: read('namespace-roles').map(clean),
  roleBindings: read('namespace-role-bindings').map(clean),
};
const out = join(dirname(fileURLToPath(import.meta.url)), '../plugins/authz-rbac/src/generated/bootstrap-policy.json');
// Formatted as the repository's formatter would, so a run on the same tree changes nothing.
writeFileSync(out, await format(JSON.stringify(data, null, 2), { ...(await resolveConfig(out)), filepath: out }));
console.log(
  `wrote ${out}: ${data.clusterRoles.length} cluster roles, ${data.clusterRoleBindings.length} cluster role bindings, ${data.roles.length} roles, ${data.roleBindings.length} role bindings`,
);
