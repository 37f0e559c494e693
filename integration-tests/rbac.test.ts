import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions, type ProgramResult } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// RBAC in a real `skiff up`: the dev preset with always-allow replaced by @skiff/plugin-authz-rbac (and the Node
// authorizer, which kubelets need beside RBAC, as in kube-apiserver's `--authorization-mode=Node,RBAC`). The whole
// cluster keeps working under its own identities (controller manager, scheduler, kubelets, plugins): a Deployment, a
// Job, a StatefulSet with a provisioned volume and a Service come up with no refusal. Then the real kubectl 1.36 as
// users of the token file: erin, editor in team-a only; victor, in group viewers bound to `view` cluster-wide; a
// ServiceAccount token from `kubectl create token`. Every allow and deny is checked, with `auth can-i` and
// `auth can-i --list`, upstream's escalation refusals, and aggregation into `view`.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('rbac');
const cacheDir = tempDir('rbac-cache');
const dataDir = join(project, 'data');
let skiff: RunningSkiff;
const admin = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

const TOKENS = {
  admin: 'admin-0123456789abcdef',
  erin: 'erin-0123456789abcdef',
  victor: 'victor-0123456789abcdef',
};

const CONFIG = `export default {
  preset: 'dev',
  plugins: [
    ['@skiff/plugin-authz-always-allow', false],
    '@skiff/plugin-authz-node',
    '@skiff/plugin-authz-rbac',
  ],
};
`;

/** kubectl with the admin kubeconfig's server and CA, but another bearer token. */
const as = (token: string, ...args: string[]): Promise<ProgramResult> => admin.kubectl(['--token', token, ...args]);

async function allowed(token: string, ...args: string[]): Promise<string> {
  const result = await as(token, ...args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

async function refused(token: string, ...args: string[]): Promise<string> {
  const result = await as(token, ...args);
  expect(result.code, `kubectl ${args.join(' ')} should be refused; stdout: ${result.stdout}`).not.toBe(0);
  // `kubectl create <kind>` words a server's refusal "error: failed to create <kind>: …", other commands "Error from server (Forbidden): …".
  return result.stderr.trim().replace(/^error: failed to create [\w-]+: /, 'Error from server (Forbidden): ');
}

/** `kubectl auth can-i` answers yes (exit 0) or no (exit 1). */
async function canI(token: string, ...args: string[]): Promise<string> {
  return (await as(token, 'auth', 'can-i', ...args)).stdout.trim();
}

/** A SelfSubjectAccessReview's answer (kubectl auth can-i needs the resource in discovery; a review does not). */
async function reviewed(token: string, resourceAttributes: Record<string, string>): Promise<boolean> {
  const review = JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } });
  const result = await admin.kubectl(['--token', token, 'create', '-o', 'json', '-f', '-'], review);
  if (result.code !== 0) throw new Error(`SelfSubjectAccessReview: ${result.stderr}`);
  return JSON.parse(result.stdout).status.allowed === true;
}

/** How a 403 from authorization reads in a log (NamespaceLifecycle's refusals of a terminating namespace are expected). */
const AUTHORIZATION_REFUSAL = /User \\?"[^"\\]+\\?" cannot \w+ resource|attempting to grant RBAC permissions/;

const forbidden = (user: string, verb: string, resource: string, group: string, namespace?: string, name?: string) =>
  `Error from server (Forbidden): ${group ? `${resource}.${group}` : resource}${name ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${group}" ${namespace ? `in the namespace "${namespace}"` : 'at the cluster scope'}`;

const WORKLOADS = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: apps }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: nginx, image: nginx:1.25, ports: [{ containerPort: 80 }] }] }
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: apps }
spec:
  selector: { app: web }
  ports: [{ port: 80 }]
---
apiVersion: v1
kind: Service
metadata: { name: web-lb, namespace: apps }
spec:
  type: LoadBalancer
  selector: { app: web }
  ports: [{ port: 8080, targetPort: 80 }]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent, namespace: apps }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec: { containers: [{ name: agent, image: busybox:1.36, command: [sleep, '3600'] }] }
---
apiVersion: batch/v1
kind: Job
metadata: { name: once, namespace: apps }
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{ name: once, image: busybox:1.36, command: [sh, -c, echo done] }]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db, namespace: apps }
spec:
  serviceName: db
  replicas: 2
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      containers:
        - name: db
          image: nginx:1.25
          volumeMounts: [{ name: data, mountPath: /data }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Mi } } }
`;

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(project, 'skiff.config.mjs'), CONFIG);
  writeFileSync(
    join(dataDir, 'tokens.csv'),
    [`${TOKENS.admin},admin,admin,"system:masters"`, `${TOKENS.erin},erin,erin,"developers"`, `${TOKENS.victor},victor,victor,"viewers"`].join('\n') + '\n',
    { mode: 0o600 },
  );
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
  for (const namespace of ['apps', 'team-a', 'team-b', 'team-c']) await admin.ok('create', 'namespace', namespace);
  await admin.ok('create', 'rolebinding', 'erin-edit', '--clusterrole=edit', '--user=erin', '-n', 'team-a');
  await admin.ok('create', 'clusterrolebinding', 'viewers', '--clusterrole=view', '--group=viewers');
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('RBAC through kubectl 1.36', () => {
  it('keeps the whole cluster working: Deployment, Job, StatefulSet with volumes, DaemonSet, Services, garbage collection, no refusal', async () => {
    await admin.apply(WORKLOADS);
    const json = (...args: string[]) => admin.json('-n', 'apps', 'get', ...args);
    await waitFor('deployment web available', async () => (await json('deployment', 'web')).status?.availableReplicas === 2, CLUSTER_TIMEOUT);
    await waitFor(
      'job once complete',
      async () => ((await json('job', 'once')).status?.conditions ?? []).some((c: any) => c.type === 'Complete' && c.status === 'True'),
      CLUSTER_TIMEOUT,
    );
    await waitFor('statefulset db ready', async () => (await json('statefulset', 'db')).status?.readyReplicas === 2, CLUSTER_TIMEOUT);
    await waitFor('endpoints of service web', async () => ((await json('endpoints', 'web')).subsets?.[0]?.addresses ?? []).length === 2, CLUSTER_TIMEOUT);
    expect((await json('pvc')).items.map((claim: any) => claim.status.phase)).toEqual(['Bound', 'Bound']);
    await waitFor('daemonset agent ready', async () => (await json('daemonset', 'agent')).status?.numberReady === 1, CLUSTER_TIMEOUT);
    await waitFor('the LoadBalancer address', async () => (await json('service', 'web-lb')).status?.loadBalancer?.ingress?.length === 1, CLUSTER_TIMEOUT);
    // The garbage collector removes the Deployment's ReplicaSet and pods.
    await admin.ok('-n', 'apps', 'delete', 'deployment', 'web');
    await waitFor('the deployment’s pods collected', async () => (await json('pods', '-l', 'app=web')).items.length === 0, CLUSTER_TIMEOUT);
    const warnings = await admin.json('get', 'events', '-A', '--field-selector', 'type=Warning');
    // The kubelet retries a mount while the claim is being bound, and the scheduler waits for an Immediate claim's
    // volume before placing its pod (both as upstream's do): those warnings are no refusal.
    const transient = (event: any) =>
      event.reason === 'MissingClusterDNS' ||
      (event.reason === 'FailedMount' && /non-bound phase/.test(event.message)) ||
      (event.reason === 'FailedScheduling' && /^0\/\d+ nodes are available: pod has unbound immediate PersistentVolumeClaims\./.test(event.message));
    expect((warnings.items as any[]).filter((event) => !transient(event)).map((event) => `${event.reason}: ${event.message}`)).toEqual([]);
    expect(skiff.stderr()).not.toMatch(AUTHORIZATION_REFUSAL);
    expect(skiff.stdout()).not.toMatch(AUTHORIZATION_REFUSAL);
  });

  it('lets the namespace controller empty and remove a namespace', async () => {
    await admin.ok('create', 'namespace', 'doomed');
    await admin.ok('-n', 'doomed', 'create', 'configmap', 'c', '--from-literal=a=b');
    await admin.ok('-n', 'doomed', 'create', 'deployment', 'd', '--image=nginx:1.25');
    await admin.ok('delete', 'namespace', 'doomed', '--wait=false');
    await waitFor('namespace doomed gone', async () => (await admin.kubectl(['get', 'namespace', 'doomed'])).code !== 0, { timeoutMs: 60_000 });
    expect(skiff.stderr()).not.toMatch(AUTHORIZATION_REFUSAL);
  });

  it('bootstraps upstream’s default roles and bindings, and the controller manager’s role', async () => {
    const roles = [
      'cluster-admin',
      'admin',
      'edit',
      'view',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'system:node',
      'system:node-proxier',
      'system:kube-scheduler',
      'system:volume-scheduler',
      'system:kube-controller-manager',
      'system:auth-delegator',
      'system:controller:deployment-controller',
      'skiff:kube-controller-manager:controllers',
    ];
    expect(await admin.ok('get', 'clusterroles', ...roles, '-o', 'name')).toBe(roles.map((role) => `clusterrole.rbac.authorization.k8s.io/${role}\n`).join(''));
    const bindings = ['cluster-admin', 'system:basic-user', 'system:discovery', 'system:kube-scheduler', 'skiff:kube-controller-manager:controllers'];
    expect(await admin.ok('get', 'clusterrolebindings', ...bindings, '-o', 'name')).toBe(
      bindings.map((name) => `clusterrolebinding.rbac.authorization.k8s.io/${name}\n`).join(''),
    );
    const clusterAdmin = await admin.json('get', 'clusterrole', 'cluster-admin');
    expect(clusterAdmin.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate']).toBe('true');
    expect(clusterAdmin.rules).toEqual([
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]);
    const edit = await admin.json('get', 'clusterrole', 'edit');
    expect(edit.aggregationRule.clusterRoleSelectors).toEqual([{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }]);
    expect(edit.rules.some((rule: any) => rule.apiGroups.includes('apps') && rule.resources.includes('deployments') && rule.verbs.includes('create'))).toBe(
      true,
    );
    expect(await admin.ok('get', 'rolebindings', '-n', 'kube-system', 'system::leader-locking-kube-scheduler', '-o', 'name')).toBe(
      'rolebinding.rbac.authorization.k8s.io/system::leader-locking-kube-scheduler\n',
    );
  });

  it('lets an editor of team-a work there only, never reading Secrets cluster-wide', async () => {
    expect(await allowed(TOKENS.erin, 'create', 'deployment', 'api', '--image=nginx:1.25', '-n', 'team-a')).toBe('deployment.apps/api created\n');
    expect(await allowed(TOKENS.erin, 'get', 'deployments', '-n', 'team-a', '-o', 'name')).toBe('deployment.apps/api\n');
    expect(await allowed(TOKENS.erin, 'create', 'secret', 'generic', 'key', '--from-literal=k=v', '-n', 'team-a')).toBe('secret/key created\n');
    expect(await allowed(TOKENS.erin, 'delete', 'deployment', 'api', '-n', 'team-a')).toBe('deployment.apps "api" deleted from team-a namespace\n');
    expect(await refused(TOKENS.erin, 'create', 'deployment', 'api', '--image=nginx:1.25', '-n', 'team-b')).toBe(
      forbidden('erin', 'create', 'deployments', 'apps', 'team-b'),
    );
    expect(await refused(TOKENS.erin, 'get', 'pods', '-n', 'team-b')).toBe(forbidden('erin', 'list', 'pods', '', 'team-b'));
    expect(await refused(TOKENS.erin, 'get', 'secrets', '-A')).toBe(forbidden('erin', 'list', 'secrets', ''));
    expect(await refused(TOKENS.erin, 'delete', 'namespace', 'team-b')).toBe(forbidden('erin', 'delete', 'namespaces', '', 'team-b', 'team-b'));
    expect(await refused(TOKENS.erin, 'create', 'rolebinding', 'mine', '--clusterrole=admin', '--user=erin', '-n', 'team-a')).toBe(
      forbidden('erin', 'create', 'rolebindings', 'rbac.authorization.k8s.io', 'team-a'),
    );
  });

  it('lets a viewer read but not write, and not read Secrets', async () => {
    await admin.ok('create', 'configmap', 'settings', '--from-literal=mode=fast', '-n', 'team-b');
    expect(await allowed(TOKENS.victor, 'get', 'configmap', 'settings', '-n', 'team-b', '-o', 'jsonpath={.data.mode}')).toBe('fast');
    expect(await allowed(TOKENS.victor, 'get', 'statefulsets', '-n', 'apps', '-o', 'name')).toBe('statefulset.apps/db\n');
    const everyPod = await admin.ok('get', 'pods', '-A', '-o', 'name');
    expect(everyPod.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(4);
    expect(await allowed(TOKENS.victor, 'get', 'pods', '-A', '-o', 'name')).toBe(everyPod);
    expect(await refused(TOKENS.victor, 'create', 'configmap', 'mine', '--from-literal=a=b', '-n', 'team-b')).toBe(
      forbidden('victor', 'create', 'configmaps', '', 'team-b'),
    );
    expect(await refused(TOKENS.victor, 'delete', 'configmap', 'settings', '-n', 'team-b')).toBe(
      forbidden('victor', 'delete', 'configmaps', '', 'team-b', 'settings'),
    );
    expect(await refused(TOKENS.victor, 'get', 'secrets', '-n', 'team-b')).toBe(forbidden('victor', 'list', 'secrets', '', 'team-b'));
    expect(await refused(TOKENS.victor, 'get', 'clusterroles')).toBe(forbidden('victor', 'list', 'clusterroles', 'rbac.authorization.k8s.io'));
  });

  it('answers kubectl auth can-i and the reason of a SubjectAccessReview from the bindings', async () => {
    expect(await canI(TOKENS.erin, 'create', 'deployments', '-n', 'team-a')).toBe('yes');
    expect(await canI(TOKENS.erin, 'create', 'deployments', '-n', 'team-b')).toBe('no');
    expect(await canI(TOKENS.erin, 'get', 'secrets', '-n', 'team-a')).toBe('yes');
    expect(await canI(TOKENS.erin, 'list', 'secrets', '-A')).toBe('no');
    expect(await canI(TOKENS.erin, 'get', 'pods', '--subresource=log', '-n', 'team-a')).toBe('yes');
    expect(await canI(TOKENS.victor, 'list', 'pods', '-A')).toBe('yes');
    expect(await canI(TOKENS.victor, 'patch', 'deployments', '-n', 'apps')).toBe('no');
    expect(await canI(TOKENS.victor, 'get', '/healthz')).toBe('yes');
    expect(await canI(TOKENS.victor, 'get', '/metrics')).toBe('no');
    const sar = JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'erin',
        groups: ['developers', 'system:authenticated'],
        resourceAttributes: { namespace: 'team-a', verb: 'create', group: 'apps', resource: 'deployments' },
      },
    });
    const answered = await admin.kubectl(['create', '-o', 'json', '-f', '-'], sar);
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout).status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "erin-edit/team-a" of ClusterRole "edit" to User "erin"',
    });
  });

  it('lists the rules for kubectl auth can-i --list', async () => {
    const list = await allowed(TOKENS.erin, 'auth', 'can-i', '--list', '-n', 'team-a');
    const lines = list.split('\n');
    expect(lines[0]).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/);
    expect(list).toMatch(/^deployments\.apps\s+\[\]\s+\[\]\s+\[create delete deletecollection patch update get list watch\]$/m);
    expect(list).toMatch(/^secrets\s+\[\]\s+\[\]\s+\[get list watch create delete deletecollection patch update\]$/m);
    expect(list).toMatch(/^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(list).toMatch(/^\s+\[\/healthz\]\s+\[\]\s+\[get\]$/m);
    expect(list).not.toMatch(/^roles\.rbac/m);
    const elsewhere = await allowed(TOKENS.erin, 'auth', 'can-i', '--list', '-n', 'team-b');
    expect(elsewhere).not.toMatch(/^deployments\.apps/m);
    expect(elsewhere).toMatch(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(await allowed(TOKENS.victor, 'auth', 'can-i', '--list', '-n', 'team-b')).toMatch(/^deployments\.apps\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  });

  it('refuses roles and bindings that grant more than their author holds, unless they may escalate or bind', async () => {
    await admin.ok('create', 'rolebinding', 'erin-admin', '--clusterrole=admin', '--user=erin', '-n', 'team-c');
    expect(await allowed(TOKENS.erin, 'create', 'role', 'readers', '--verb=get,list', '--resource=pods,secrets', '-n', 'team-c')).toBe(
      'role.rbac.authorization.k8s.io/readers created\n',
    );
    expect(await allowed(TOKENS.erin, 'create', 'rolebinding', 'victor-edit', '--clusterrole=edit', '--user=victor', '-n', 'team-c')).toBe(
      'rolebinding.rbac.authorization.k8s.io/victor-edit created\n',
    );
    expect(await refused(TOKENS.erin, 'create', 'role', 'nodes', '--verb=get', '--resource=nodes', '-n', 'team-c')).toBe(
      'Error from server (Forbidden): roles.rbac.authorization.k8s.io "nodes" is forbidden: user "erin" (groups=["developers" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}',
    );
    expect(await refused(TOKENS.erin, 'create', 'rolebinding', 'root', '--clusterrole=cluster-admin', '--user=erin', '-n', 'team-c')).toMatch(
      /^Error from server \(Forbidden\): rolebindings\.rbac\.authorization\.k8s\.io "root" is forbidden: user "erin" \(groups=\["developers" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/,
    );
    // `bind` on one role lets her bind it; `escalate` on roles lets her write any rule.
    await admin.apply(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: bind-cluster-admin }
rules: [{ apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [bind], resourceNames: [cluster-admin] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: escalate-roles }
rules: [{ apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate] }]
`);
    await admin.ok('create', 'rolebinding', 'erin-bind', '--clusterrole=bind-cluster-admin', '--user=erin', '-n', 'team-c');
    await admin.ok('create', 'rolebinding', 'erin-escalate', '--clusterrole=escalate-roles', '--user=erin', '-n', 'team-c');
    await waitFor('erin may bind cluster-admin', async () => (await canI(TOKENS.erin, 'bind', 'clusterroles/cluster-admin', '-n', 'team-c')) === 'yes', {
      timeoutMs: 30_000,
    });
    expect(await allowed(TOKENS.erin, 'create', 'rolebinding', 'victor-root', '--clusterrole=cluster-admin', '--user=victor', '-n', 'team-c')).toBe(
      'rolebinding.rbac.authorization.k8s.io/victor-root created\n',
    );
    expect(await allowed(TOKENS.erin, 'create', 'role', 'nodes', '--verb=get', '--resource=nodes', '-n', 'team-c')).toBe(
      'role.rbac.authorization.k8s.io/nodes created\n',
    );
    expect(await refused(TOKENS.erin, 'create', 'rolebinding', 'root', '--clusterrole=cluster-admin', '--user=erin', '-n', 'team-a')).toBe(
      forbidden('erin', 'create', 'rolebindings', 'rbac.authorization.k8s.io', 'team-a'),
    );
  });

  it('aggregates a ClusterRole labelled aggregate-to-view into view', async () => {
    const widgetsRule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
    const holdsWidgets = async (role: string) =>
      ((await admin.json('get', 'clusterrole', role)).rules as any[]).some((rule) => JSON.stringify(rule) === JSON.stringify(widgetsRule));
    const victorListsWidgets = () => reviewed(TOKENS.victor, { verb: 'list', group: 'example.com', resource: 'widgets' });
    expect(await victorListsWidgets()).toBe(false);
    await admin.apply(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widgets-view
  labels: { rbac.authorization.k8s.io/aggregate-to-view: "true" }
rules: [{ apiGroups: [example.com], resources: [widgets], verbs: [get, list, watch] }]
`);
    await waitFor('widgets in view', () => holdsWidgets('view'), { timeoutMs: 30_000 });
    // view is itself labelled aggregate-to-edit, and edit aggregate-to-admin: the rule travels on.
    await waitFor('widgets in edit and admin', async () => (await holdsWidgets('edit')) && (await holdsWidgets('admin')), { timeoutMs: 30_000 });
    await waitFor('victor may list widgets', victorListsWidgets, { timeoutMs: 30_000 });
    await admin.ok('delete', 'clusterrole', 'widgets-view');
    await waitFor('widgets gone from view', async () => !(await holdsWidgets('view')), { timeoutMs: 30_000 });
    await waitFor('victor may no longer list widgets', async () => !(await victorListsWidgets()), { timeoutMs: 30_000 });
  });

  it('decides for a ServiceAccount token from kubectl create token by its bindings', async () => {
    await admin.ok('create', 'serviceaccount', 'robot', '-n', 'team-a');
    await admin.ok('create', 'rolebinding', 'robot-view', '--clusterrole=view', '--serviceaccount=team-a:robot', '-n', 'team-a');
    const token = (await admin.ok('create', 'token', 'robot', '-n', 'team-a')).trim();
    expect(await allowed(token, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}')).toBe('system:serviceaccount:team-a:robot');
    expect(await allowed(token, 'get', 'deployments', '-n', 'team-a', '-o', 'name')).toBe('');
    expect(await refused(token, 'get', 'pods', '-n', 'team-b')).toBe(forbidden('system:serviceaccount:team-a:robot', 'list', 'pods', '', 'team-b'));
    expect(await refused(token, 'delete', 'namespace', 'team-b')).toBe(
      forbidden('system:serviceaccount:team-a:robot', 'delete', 'namespaces', '', 'team-b', 'team-b'),
    );
    expect(await canI(token, 'create', 'configmaps', '-n', 'team-a')).toBe('no');
  });
});
