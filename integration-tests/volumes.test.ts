import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { helmPath, kubectlOn, kubectlVersions, runProgram } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// Local persistent volumes in a real `skiff up`, driven by the real kubectl 1.36 and helm: the default
// StorageClass `standard` listed as `(default)`, a claim without a class provisioned as a host directory
// under the data dir and Bound (`kubectl wait --for=jsonpath=…=Bound`), its deletion taking the volume and
// the directory along, a StatefulSet's volumeClaimTemplates Bound, and `helm install --wait` of a chart
// whose claim must be Bound; and a dev-preset pod's hostPath made under the data dir, never on the machine.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('volumes');
const cacheDir = tempDir('volumes-cache');
const dataDir = join(project, 'data');
const WAIT = { timeoutMs: 60_000 };
let skiff: RunningSkiff;
const { kubectl, ok, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const CLAIM = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: 2Gi
`;

describe('local persistent volumes with kubectl 1.36', () => {
  it('lists the default StorageClass', async () => {
    const table = await ok('get', 'storageclass');
    expect(table.split('\n')[0]).toMatch(/^NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE$/);
    expect(table).toMatch(/^standard \(default\)\s+skiff\.dev\/host-path\s+Delete\s+Immediate\s+false\s+/m);
  });

  it('binds a claim to a provisioned host directory, and deleting the claim removes both', async () => {
    expect(await apply(CLAIM)).toBe('persistentvolumeclaim/data created\n');
    expect(await ok('wait', '--for=jsonpath={.status.phase}=Bound', 'pvc/data', '--timeout=60s')).toBe('persistentvolumeclaim/data condition met\n');

    const uid = await ok('get', 'pvc', 'data', '-o', 'jsonpath={.metadata.uid}');
    const volume = `pvc-${uid}`;
    expect(await ok('get', 'pvc', 'data', '-o', 'jsonpath={.spec.storageClassName} {.spec.volumeName} {.status.capacity.storage}')).toBe(
      `standard ${volume} 2Gi`,
    );
    const pvTable = await ok('get', 'pv', volume);
    expect(pvTable).toMatch(new RegExp(`^${volume}\\s+2Gi\\s+RWO\\s+Delete\\s+Bound\\s+default/data\\s+standard\\s+`, 'm'));
    const path = join(dataDir, 'volumes', volume);
    expect(await ok('get', 'pv', volume, '-o', 'jsonpath={.spec.hostPath.path}')).toBe(path);
    expect(existsSync(path)).toBe(true);

    expect(await ok('delete', 'pvc', 'data')).toBe('persistentvolumeclaim "data" deleted from default namespace\n');
    await waitFor('the volume to be gone', async () => (await kubectl(['get', 'pv', volume])).code !== 0, WAIT);
    expect(existsSync(path)).toBe(false);
  });

  it("binds a StatefulSet's volumeClaimTemplates, one volume per member", async () => {
    await apply(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: postgres:16
        volumeMounts:
        - name: pgdata
          mountPath: /var/lib/postgresql/data
  volumeClaimTemplates:
  - metadata:
      name: pgdata
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
`);
    await ok('rollout', 'status', 'statefulset/db', '--timeout=60s');
    for (const claim of ['pgdata-db-0', 'pgdata-db-1']) {
      expect(await ok('wait', '--for=jsonpath={.status.phase}=Bound', `pvc/${claim}`, '--timeout=60s')).toBe(`persistentvolumeclaim/${claim} condition met\n`);
    }
    const volumes = (await ok('get', 'pvc', 'pgdata-db-0', 'pgdata-db-1', '-o', 'jsonpath={.items[*].spec.volumeName}')).split(' ');
    expect(new Set(volumes).size).toBe(2);
    for (const volume of volumes) expect(existsSync(join(dataDir, 'volumes', volume))).toBe(true);
  });

  it('lets helm install --wait finish once the chart claim is Bound', async () => {
    const chart = join(project, 'stateful');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: stateful\nversion: 0.1.0\n');
    writeFileSync(join(chart, 'templates/claim.yaml'), CLAIM.replace('name: data', 'name: {{ .Release.Name }}-data'));
    const helm = await runProgram(helmPath(), ['--kubeconfig', skiff.kubeconfig, 'install', 'cache', chart, '--wait', '--timeout', '60s'], {
      timeoutMs: 90_000,
    });
    expect(helm.stderr).toBe('');
    expect(helm.code).toBe(0);
    expect(helm.stdout).toMatch(/STATUS: deployed/);
    expect(await ok('get', 'pvc', 'cache-data', '-o', 'jsonpath={.status.phase}')).toBe('Bound');
  });
});

describe('hostPath volumes of the dev preset (simulated containers)', () => {
  it('makes a DirectoryOrCreate path under the node folder of the data dir, never on the machine', async () => {
    // A path of this machine that nothing has made yet.
    const fresh = join(tempDir('host-path'), 'made-by-a-pod');
    try {
      await apply(`apiVersion: v1
kind: Pod
metadata:
  name: host-path
spec:
  containers:
  - name: app
    image: nginx:1.27
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    hostPath:
      path: ${fresh}
      type: DirectoryOrCreate
`);
      expect(await ok('wait', '--for=condition=Ready', 'pod/host-path', '--timeout=60s')).toBe('pod/host-path condition met\n');
      const node = await ok('get', 'pod', 'host-path', '-o', 'jsonpath={.spec.nodeName}');
      expect(existsSync(fresh)).toBe(false);
      expect(existsSync(join(dataDir, 'nodes', node, 'host', fresh))).toBe(true);
      await ok('delete', 'pod', 'host-path', '--wait=false');
    } finally {
      rmSync(join(fresh, '..'), { recursive: true, force: true });
    }
  });
});
