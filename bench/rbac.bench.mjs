#!/usr/bin/env node
// What RBAC (@skiff/plugin-authz-rbac) costs a request: GETs of one pod over HTTPS keep-alive by 16 clients, as a
// system:masters user (decided by the API server's privileged-group check before RBAC is asked: the baseline) and as
// a plain user bound to the `view` ClusterRole by a RoleBinding (decided by RBAC) — on the same server, in the same
// run, alternating, with 2,000 other users' bindings stored so the index has something to skip. Then the decision
// itself in-process: cached, and uncached (every RBAC change drops the cache). BENCH_ROUNDS (default 6) rounds of
// BENCH_SECONDS (default 1.5) per side, alternating which side goes first.
// Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAIN_STAGE, definePlugin } from '@skiff/kernel';
import rbac, { RbacPolicy } from '@skiff/plugin-authz-rbac';
import { startBenchApiServer } from './bench-cluster.mjs';
import { load as runLoad } from './https-load.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const OTHER_BINDINGS = 2_000;
const PLAIN_TOKEN = 'plain-token';

/** A bearer token for alice, a user outside system:masters; RBAC alone decides what she may do. */
const plainUser = definePlugin({
  name: 'bench-plain-user',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    const user = { username: 'alice', groups: ['readers', 'system:authenticated'] };
    kernel.hooks.authenticate.tap({ name: 'bench-plain-user', stage: CHAIN_STAGE.TOKEN }, (request) =>
      request.headers.authorization === `Bearer ${PLAIN_TOKEN}` ? { user } : undefined,
    );
  },
});

const binding = (name, user, role) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
});

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-rbac-'));
const server = await startBenchApiServer({ plugins: [plainUser, rbac], dataDir });
const rows = [];
try {
  const post = async (path, body) => {
    const created = await server.call('POST', path, body);
    if (created.status !== 201) throw new Error(`POST ${path}: ${JSON.stringify(created.body)}`);
  };
  await post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'bench-get' },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
  });
  for (let i = 0; i < OTHER_BINDINGS; i++)
    await post('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', binding(`other-${i}`, `user-${i}`, 'edit'));
  await post('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', binding('alice-view', 'alice', 'view'));

  const get = (token) =>
    runLoad({
      url: `${server.url}/api/v1/namespaces/default/pods/bench-get`,
      method: 'GET',
      ca: server.caPem,
      token,
      concurrency: CONCURRENCY,
      seconds: SECONDS,
    });
  // Short rounds in ABBA order, so drift in the machine's load (other processes, GC, JIT warm-up) falls on both sides.
  for (let round = 1; round <= ROUNDS; round++) {
    const sides = [
      [`round ${round}: system:masters (baseline)`, server.token],
      [`round ${round}: alice, RoleBinding to view (RBAC)`, PLAIN_TOKEN],
    ];
    if (round % 2 === 0) sides.reverse();
    for (const [name, token] of sides) rows.push({ name, ...(await get(token)) });
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
console.table(rows);
const rate = (prefix) => rows.filter((row) => row.name.includes(prefix)).reduce((sum, row) => sum + row.rps, 0);
const baseline = rate('baseline');
const withRbac = rate('RBAC');
const extra = ((baseline - withRbac) / baseline) * 100;
console.log(
  `RBAC-decided GETs cost ${extra.toFixed(1)}% more than system:masters GETs (throughput over all ${ROUNDS} rounds; budget 10%: ${extra <= 10 ? 'within' : 'OVER'})`,
);

// The decision alone, in-process, over the same kind of policy.
const policy = new RbacPolicy();
policy.apply('/registry/rbac.authorization.k8s.io/clusterroles/view', {
  metadata: { name: 'view' },
  rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'services', 'configmaps'] }],
});
for (let i = 0; i < OTHER_BINDINGS; i++)
  policy.apply(`/registry/rbac.authorization.k8s.io/rolebindings/default/other-${i}`, binding(`other-${i}`, `user-${i}`, 'view'));
policy.apply('/registry/rbac.authorization.k8s.io/rolebindings/default/alice-view', {
  ...binding('alice-view', 'alice', 'view'),
  metadata: { name: 'alice-view', namespace: 'default' },
});
const attributes = {
  user: { username: 'alice', groups: ['readers', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'bench-get',
  path: '',
};
const time = (label, n, fn) => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  const ns = Number(process.hrtime.bigint() - start) / n;
  console.log(`${label}: ${(ns / 1000).toFixed(2)} µs per decision`);
  return ns;
};
if (policy.authorize(attributes)?.decision !== 'allow') throw new Error('the policy should allow alice');
const cachedNs = time('decision, cached', 200_000, () => policy.authorize(attributes));
// The server answers on one thread: 1 / baseline rate is what one GET costs it, decision included or not.
console.log(`a cached decision is ${((cachedNs / (1e9 / (baseline / ROUNDS))) * 100).toFixed(2)}% of one GET's time on the server`);
time('decision, uncached (a change before each)', 20_000, (i) => {
  policy.apply('/registry/rbac.authorization.k8s.io/clusterroles/unrelated', i % 2 ? undefined : { metadata: { name: 'unrelated' }, rules: [] });
  policy.authorize(attributes);
});
