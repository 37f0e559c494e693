import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { Kubectl, startSkiff, tempDir, type RunningSkiff } from './harness.js';

/**
 * Values a careless or hostile user sends that Kubernetes' typed decoding refuses or reads its own way,
 * through the real kubectl and the official JavaScript client against one `skiff up --nodes 0`:
 * integers past their Go type, integers written as 1e3, YAML merge keys, absurd grace periods and long
 * generateName prefixes.
 */

let skiff: RunningSkiff;
let kubectl: Kubectl;
let kc: k8s.KubeConfig;
let target: { url: string; ca: Buffer; token: string };
const dataDir = tempDir('hostile-values');

beforeAll(async () => {
  skiff = await startSkiff(['--nodes', '0', '--data-dir', dataDir]);
  kubectl = new Kubectl(skiff.kubeconfig);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(skiff.kubeconfig);
  const config = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  target = {
    url: config.clusters[0].cluster.server,
    ca: Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64'),
    token: config.users[0].user.token,
  };
  await kubectl.ok('create', 'deployment', 'web', '--image=nginx', '--replicas=1');
});
afterAll(async () => {
  await skiff?.stop();
  kubectl?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

/** One HTTPS request as the admin, the body sent as given. */
function call(method: string, path: string, body: string, contentType: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${target.url}${path}`,
      { method, ca: target.ca, headers: { authorization: `Bearer ${target.token}`, 'content-type': contentType, accept: 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const deploymentJson = (name: string, replicas: string) =>
  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}"},"spec":{"replicas":${replicas},` +
  `"selector":{"matchLabels":{"app":"${name}"}},"template":{"metadata":{"labels":{"app":"${name}"}},` +
  `"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`;

async function apiStatus(promise: Promise<unknown>): Promise<{ code: number; status: any }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof k8s.ApiException) return { code: err.code, status: JSON.parse(err.body as string) };
    throw err;
  }
  throw new Error('the request succeeded');
}

describe('replicas past int32', () => {
  it('kubectl scale --replicas=2147483648 is refused and kubectl can still read the Deployment', async () => {
    const scaled = await kubectl.run(['scale', 'deployment/web', '--replicas=2147483648']);
    expect(scaled.code).not.toBe(0);
    expect(scaled.stderr).toContain('Error from server (BadRequest)');
    expect(scaled.stderr).toContain('cannot unmarshal number 2147483648 into Go struct field ScaleSpec.spec.replicas of type int32');
    const deployment = await kubectl.json('get', 'deployment', 'web');
    expect(deployment.spec.replicas).toBe(1);
    expect(await kubectl.ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}')).toBe('1');
  });

  it('the JavaScript client gets a 400 Status for a Scale PUT and for a Deployment PUT', async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const scale = await apps.readNamespacedDeploymentScale({ name: 'web', namespace: 'default' });
    const put = await apiStatus(
      apps.replaceNamespacedDeploymentScale({ name: 'web', namespace: 'default', body: { ...scale, spec: { replicas: 4294967296 } } }),
    );
    expect(put.code).toBe(400);
    expect(put.status).toMatchObject({ kind: 'Status', reason: 'BadRequest', details: { causes: [{ field: 'spec.replicas' }] } });
    const deployment = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    const replaced = await apiStatus(
      apps.replaceNamespacedDeployment({
        name: 'web',
        namespace: 'default',
        body: { ...deployment, spec: { ...deployment.spec!, progressDeadlineSeconds: 2 ** 31 } },
      }),
    );
    expect(replaced.code).toBe(400);
    expect(replaced.status.message).toContain(
      'cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.progressDeadlineSeconds of type int32',
    );
    expect((await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' })).spec!.replicas).toBe(1);
  });
});

describe('integers written as 1e3', () => {
  it('a raw JSON body with replicas 1e3 is refused as Go refuses it; kubectl create -f reads the file as YAML first and sends 1000', async () => {
    const dir = tempDir('hostile-values-files');
    try {
      const file = `${dir}/exp.json`;
      writeFileSync(file, deploymentJson('exp', '1e3'));
      const raw = await kubectl.run(['create', '--raw', '/apis/apps/v1/namespaces/default/deployments', '-f', file]);
      expect(raw.code).not.toBe(0);
      expect(raw.stderr).toContain('cannot unmarshal number 1e3 into Go struct field DeploymentSpec.spec.replicas of type int32');
      expect((await kubectl.run(['get', 'deployment', 'exp'])).code).not.toBe(0);
      await kubectl.ok('create', '-f', file);
      expect(await kubectl.ok('get', 'deployment', 'exp', '-o', 'jsonpath={.spec.replicas}')).toBe('1000');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a merge patch with 1.0 is refused, a strategic merge patch with 1e1 is taken (Kubernetes reads it through a map)', async () => {
    const merge = await kubectl.run(['patch', 'deployment', 'web', '--type=merge', '-p', '{"spec":{"replicas":1.0}}']);
    expect(merge.code).not.toBe(0);
    expect(merge.stderr).toContain('cannot unmarshal number 1.0 into Go struct field DeploymentSpec.spec.replicas of type int32');
    const strategic = await kubectl.run(['patch', 'deployment', 'exp', '--type=strategic', '-p', '{"spec":{"replicas":1e1}}']);
    expect(strategic.code, strategic.stderr).toBe(0);
    expect(await kubectl.ok('get', 'deployment', 'exp', '-o', 'jsonpath={.spec.replicas}')).toBe('10');
  });
});

describe('YAML merge keys', () => {
  const manifest = (name: string) =>
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      `  name: ${name}`,
      '  labels: &common',
      '    app: web',
      '    tier: front',
      'data:',
      '  <<: *common',
      '  tier: back',
      '  extra: "1"',
      '',
    ].join('\n');

  it('a YAML body using an anchor and `<<` creates the merged object, as kubectl reads the same file', async () => {
    const created = await call('POST', '/api/v1/namespaces/default/configmaps', manifest('merged'), 'application/yaml');
    expect(created.status).toBe(201);
    const expected = { app: 'web', tier: 'back', extra: '1' };
    expect((await kubectl.json('get', 'configmap', 'merged')).data).toEqual(expected);
    expect((await kubectl.run(['create', '-f', '-'], { input: manifest('merged-by-kubectl') })).code).toBe(0);
    expect((await kubectl.json('get', 'configmap', 'merged-by-kubectl')).data).toEqual(expected);
  });
});

describe('grace periods', () => {
  beforeAll(async () => {
    // Bound to a node that never comes: its delete is graceful, so the grace period is used.
    const created = await kubectl.run(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'bound' },
        spec: { nodeName: 'ghost', containers: [{ name: 'c', image: 'nginx' }] },
      }),
    });
    expect(created.code, created.stderr).toBe(0);
  });

  it('kubectl delete --grace-period past the longest Go duration is a 422 naming the option, and the pod stays', async () => {
    const deleted = await kubectl.run(['delete', 'pod', 'bound', '--grace-period=99999999999', '--wait=false']);
    expect(deleted.code).not.toBe(0);
    expect(deleted.stderr).toContain('gracePeriodSeconds: Invalid value: 99999999999: must be less than or equal to 9223372036');
    expect((await kubectl.json('get', 'pod', 'bound')).metadata.deletionTimestamp).toBeUndefined();
  });

  it('the JavaScript client gets the same 422 from the query parameter', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const answer = await apiStatus(core.deleteNamespacedPod({ name: 'bound', namespace: 'default', gracePeriodSeconds: 1e12 }));
    expect(answer.code).toBe(422);
    expect(answer.status).toMatchObject({ reason: 'Invalid', details: { kind: 'DeleteOptions', causes: [{ field: 'gracePeriodSeconds' }] } });
  });
});

describe('generateName', () => {
  it('a 70-character prefix is cut so the generated name has 63 characters', async () => {
    const prefix = `${'g'.repeat(70)}-`;
    const created = await kubectl.run(['create', '-f', '-', '-o', 'name'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: prefix } }),
    });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toMatch(new RegExp(`^configmap/${'g'.repeat(58)}[a-z0-9]{5}$`));
  });
});
