import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { helmPath, pythonWithKubernetes, runProgram } from './clients.js';
import { startSkiff, tempDir, type RunningSkiff } from './harness.js';

// The official client libraries, unchanged, against one `skiff up`: Debian's python3-kubernetes and
// @kubernetes/client-node each create, list, watch, patch and delete objects of the core, apps, batch and rbac
// groups, through their typed APIs; and helm 4 runs a chart's life cycle.
let skiff: RunningSkiff;
let kc: k8s.KubeConfig;
const dataDir = tempDir('client-libraries');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir, '--nodes', '0']);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(skiff.kubeconfig);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function runPython(script: string, ...args: string[]) {
  return runProgram(pythonWithKubernetes(), ['-c', script, ...args], { timeoutMs: 60_000 });
}

const PYTHON_CRUD = String.raw`
import json, sys, threading
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
ns = 'py'
core, apps, batch, rbac = client.CoreV1Api(), client.AppsV1Api(), client.BatchV1Api(), client.RbacAuthorizationV1Api()
out = {}
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

seen = []
def watch_configmaps():
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, ns, field_selector='metadata.name=settings', timeout_seconds=10):
        seen.append((event['type'], event['object'].metadata.name))
        if event['type'] == 'DELETED':
            w.stop()
watcher = threading.Thread(target=watch_configmaps)
watcher.start()
import time; time.sleep(1)

core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name='settings'), data={'mode': 'fast'}))
core.patch_namespaced_config_map('settings', ns, {'data': {'mode': 'slow'}})
out['configmap'] = core.read_namespaced_config_map('settings', ns).data
core.create_namespaced_secret(ns, client.V1Secret(metadata=client.V1ObjectMeta(name='creds'), string_data={'password': 's3cret'}))
out['secret_type'] = core.read_namespaced_secret('creds', ns).type

container = client.V1Container(name='web', image='nginx:1.27')
template = client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={'app': 'web'}), spec=client.V1PodSpec(containers=[container]))
apps.create_namespaced_deployment(ns, client.V1Deployment(metadata=client.V1ObjectMeta(name='web'),
    spec=client.V1DeploymentSpec(replicas=1, selector=client.V1LabelSelector(match_labels={'app': 'web'}), template=template)))
apps.patch_namespaced_deployment_scale('web', ns, {'spec': {'replicas': 3}})
out['replicas'] = apps.read_namespaced_deployment('web', ns).spec.replicas
out['deployments'] = [d.metadata.name for d in apps.list_namespaced_deployment(ns).items]

job_template = client.V1PodTemplateSpec(spec=client.V1PodSpec(restart_policy='Never', containers=[client.V1Container(name='once', image='busybox:1.36')]))
batch.create_namespaced_job(ns, client.V1Job(metadata=client.V1ObjectMeta(name='once'), spec=client.V1JobSpec(template=job_template)))
job = batch.read_namespaced_job('once', ns)
out['job'] = {'backoffLimit': job.spec.backoff_limit, 'selector': sorted((job.spec.selector.match_labels or {}).keys())}

rbac.create_namespaced_role(ns, client.V1Role(metadata=client.V1ObjectMeta(name='reader'),
    rules=[client.V1PolicyRule(api_groups=[''], resources=['pods'], verbs=['get', 'list'])]))
rbac.create_namespaced_role_binding(ns, client.V1RoleBinding(metadata=client.V1ObjectMeta(name='reader-bob'),
    role_ref=client.V1RoleRef(api_group='rbac.authorization.k8s.io', kind='Role', name='reader'),
    subjects=[(getattr(client, 'RbacV1Subject', None) or client.V1Subject)(kind='User', name='bob', api_group='rbac.authorization.k8s.io')]))
out['roles'] = [r.metadata.name for r in rbac.list_namespaced_role(ns).items]
out['bindings'] = [b.role_ref.name for b in rbac.list_namespaced_role_binding(ns).items]

core.delete_namespaced_config_map('settings', ns)
apps.delete_namespaced_deployment('web', ns)
batch.delete_namespaced_job('once', ns, propagation_policy='Background')
rbac.delete_namespaced_role('reader', ns)
watcher.join(15)
out['watched'] = seen
out['left'] = {'deployments': len(apps.list_namespaced_deployment(ns).items), 'roles': len(rbac.list_namespaced_role(ns).items)}
print(json.dumps(out))
`;

describe('python3-kubernetes (Debian)', () => {
  it('creates, lists, watches, patches and deletes core, apps, batch and rbac objects', async () => {
    const result = await runPython(PYTHON_CRUD, skiff.kubeconfig);
    if (result.code !== 0) throw new Error(`python exited ${result.code}\n${result.stderr}`);
    const out = JSON.parse(result.stdout.trim().split('\n').pop()!);
    expect(out.configmap).toEqual({ mode: 'slow' });
    expect(out.secret_type).toBe('Opaque');
    expect(out.replicas).toBe(3);
    expect(out.deployments).toEqual(['web']);
    expect(out.job.backoffLimit).toBe(6);
    expect(out.job.selector).toContain('batch.kubernetes.io/controller-uid');
    expect(out.roles).toEqual(['reader']);
    expect(out.bindings).toEqual(['reader']);
    expect(out.watched).toEqual([
      ['ADDED', 'settings'],
      ['MODIFIED', 'settings'],
      ['DELETED', 'settings'],
    ]);
    expect(out.left).toEqual({ deployments: 0, roles: 0 });
  });
});

describe('@kubernetes/client-node', () => {
  it('creates, lists, watches, patches and deletes core, apps, batch and rbac objects', async () => {
    const namespace = 'js';
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });

    const events: string[] = [];
    const watching = await new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      // Every namespace also holds kube-root-ca.crt: watch the one ConfigMap the test writes.
      { fieldSelector: 'metadata.name=settings' },
      (type: string, object: k8s.V1ConfigMap) => events.push(`${type} ${object.metadata?.name}`),
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'settings' }, data: { mode: 'fast' } } });
      await core.patchNamespacedConfigMap(
        { name: 'settings', namespace, body: { data: { mode: 'slow' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      expect((await core.readNamespacedConfigMap({ name: 'settings', namespace })).data).toEqual({ mode: 'slow' });

      await apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: 'web' },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'web' } },
            template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
          },
        },
      });
      await apps.patchNamespacedDeployment(
        { name: 'web', namespace, body: [{ op: 'replace', path: '/spec/replicas', value: 2 }] },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
      expect((await apps.readNamespacedDeployment({ name: 'web', namespace })).spec?.replicas).toBe(2);

      await batch.createNamespacedJob({
        namespace,
        body: { metadata: { name: 'once' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'once', image: 'busybox:1.36' }] } } } },
      });
      const job = await batch.readNamespacedJob({ name: 'once', namespace });
      expect(job.spec?.completions).toBe(1);
      expect(job.spec?.template.metadata?.labels?.['job-name']).toBe('once');

      await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
      await rbac.createClusterRole({ body: { metadata: { name: 'js-viewer' }, rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] } });
      expect((await rbac.listNamespacedRole({ namespace })).items.map((role) => role.metadata?.name)).toEqual(['reader']);

      await core.deleteNamespacedConfigMap({ name: 'settings', namespace });
      await apps.deleteNamespacedDeployment({ name: 'web', namespace });
      await batch.deleteNamespacedJob({ name: 'once', namespace });
      await rbac.deleteNamespacedRole({ name: 'reader', namespace });
      await rbac.deleteClusterRole({ name: 'js-viewer' });
      expect((await apps.listNamespacedDeployment({ namespace })).items).toEqual([]);
      await expect(rbac.readClusterRole({ name: 'js-viewer' })).rejects.toMatchObject({ code: 404 });
      const deadline = Date.now() + 5_000;
      while (events.length < 3 && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 50));
      expect(events).toEqual(['ADDED settings', 'MODIFIED settings', 'DELETED settings']);
    } finally {
      watching.abort();
    }
  });
});

describe('helm 4', () => {
  it('installs, upgrades and uninstalls the chart `helm create` writes', async () => {
    const helm = (...args: string[]) => runProgram(helmPath(), ['--kubeconfig', skiff.kubeconfig, ...args]);
    const chartDir = join(dataDir, 'charts');
    mkdirSync(chartDir, { recursive: true });
    const ok = async (...args: string[]) => {
      const result = await helm(...args);
      if (result.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${result.code}\n${result.stderr}`);
      return result.stdout;
    };
    await ok('create', join(chartDir, 'demo'));
    expect(await ok('install', 'demo', join(chartDir, 'demo'), '--namespace', 'default')).toMatch(/STATUS: deployed/);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    expect((await apps.readNamespacedDeployment({ name: 'demo', namespace: 'default' })).spec?.replicas).toBe(1);
    expect(await ok('upgrade', 'demo', join(chartDir, 'demo'), '--set', 'replicaCount=2')).toMatch(/has been upgraded/);
    expect((await apps.readNamespacedDeployment({ name: 'demo', namespace: 'default' })).spec?.replicas).toBe(2);
    expect(await ok('list', '-o', 'json')).toMatch(/"name":"demo".*"revision":"2".*"status":"deployed"/);
    expect(await ok('uninstall', 'demo')).toMatch(/release "demo" uninstalled/);
    await expect(apps.readNamespacedDeployment({ name: 'demo', namespace: 'default' })).rejects.toMatchObject({ code: 404 });
    const secrets = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: 'default', labelSelector: 'owner=helm' });
    expect(secrets.items).toEqual([]);
  });
});
