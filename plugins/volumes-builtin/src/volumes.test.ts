import { lstat, mkdtemp, readFile, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import type { VolumePlugin } from '@skiff/kernel';
import { builtinVolumePlugins } from './builtin-plugins.js';
import { VOLUME_PLUGIN } from './names.js';
import { fakeContext, testPod } from './test-support.js';
import { isMountPoint, runningAsRoot, unmount } from './tmpfs.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-volumes-'));
});
afterEach(async () => {
  await unmount(join(dir, 'memory')).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

function pluginFor(volume: Record<string, unknown>, options = { tmpfs: true, secretsOnTmpfs: false }): VolumePlugin {
  const matching = builtinVolumePlugins(options).filter((plugin) => plugin.canSupport(volume));
  expect(matching).toHaveLength(1);
  return matching[0]!;
}

const mode = async (path: string) => (await stat(path)).mode & 0o7777;

const configMap = (data: Record<string, string>, binaryData?: Record<string, string>) => ({
  resource: 'configmaps',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'default' },
  data,
  ...(binaryData ? { binaryData } : {}),
});

const secret = { resource: 'secrets', apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, data: { password: 'czNjcjN0' } };

describe('emptyDir', () => {
  it('is a world-writable folder, removed by tearDown', async () => {
    const volume = { name: 'cache', emptyDir: {} };
    const plugin = pluginFor(volume);
    expect(plugin.name).toBe(VOLUME_PLUGIN.EMPTY_DIR);
    const target = join(dir, 'cache');
    expect(await plugin.setUp(testPod(), volume, target, fakeContext())).toBeUndefined();
    expect(await mode(target)).toBe(0o777);
    await writeFile(join(target, 'kept'), 'x');
    await plugin.setUp(testPod(), volume, target, fakeContext());
    expect(await readFile(join(target, 'kept'), 'utf8')).toBe('x');
    await plugin.tearDown(testPod(), 'cache', target, fakeContext());
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
  });

  it('with medium Memory and tmpfs turned off, is a folder on disk and says so once', async () => {
    const volume = { name: 'memory', emptyDir: { medium: 'Memory' } };
    const context = fakeContext();
    const plugin = pluginFor(volume, { tmpfs: false, secretsOnTmpfs: false });
    await plugin.setUp(testPod(), volume, join(dir, 'memory'), context);
    await plugin.setUp(testPod(), volume, join(dir, 'memory'), context);
    expect(context.events).toEqual([
      'Warning TmpfsUnavailable: emptyDir volume "memory" asks for medium Memory, but it is a folder on disk: tmpfs is turned off for this node',
    ]);
    expect(await isMountPoint(join(dir, 'memory'))).toBe(false);
  });

  it.runIf(runningAsRoot())('with medium Memory, is a tmpfs of the size limit when the kubelet runs as root', async () => {
    const volume = { name: 'memory', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } };
    const context = fakeContext();
    const target = join(dir, 'memory');
    const plugin = pluginFor(volume);
    await plugin.setUp(testPod(), volume, target, context);
    // A container (no CAP_SYS_ADMIN) cannot mount: then the fallback's warning is what we see.
    if (context.events.length) return expect(context.events[0]).toMatch(/^Warning TmpfsUnavailable: .*mount of tmpfs/);
    expect(await isMountPoint(target)).toBe(true);
    await plugin.setUp(testPod(), volume, target, context);
    expect(await mode(target)).toBe(0o777);
    await plugin.tearDown(testPod(), 'memory', target, context);
    expect(await isMountPoint(target)).toBe(false);
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
  });
});

describe('configMap and secret', () => {
  it('writes every key through the ..data symlink, read-only, and swaps it atomically on an update', async () => {
    const context = fakeContext([configMap({ 'app.conf': 'a=1', other: 'b' }, { 'blob.bin': Buffer.from([0, 1, 2]).toString('base64') })]);
    const volume = { name: 'config', configMap: { name: 'settings', defaultMode: 0o640 } };
    const plugin = pluginFor(volume);
    const target = join(dir, 'config');
    expect(await plugin.setUp(testPod(), volume, target, context)).toEqual({ readOnly: true });
    expect((await readdir(target)).sort()).toEqual([
      expect.stringMatching(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.[0-9a-f]+$/),
      '..data',
      'app.conf',
      'blob.bin',
      'other',
    ]);
    expect(await readFile(join(target, 'app.conf'), 'utf8')).toBe('a=1');
    expect([...(await readFile(join(target, 'blob.bin')))]).toEqual([0, 1, 2]);
    expect(await readlink(join(target, 'app.conf'))).toBe('..data/app.conf');
    expect(await mode(join(target, 'app.conf'))).toBe(0o640);
    const first = await readlink(join(target, '..data'));

    await plugin.setUp(testPod(), volume, target, context);
    expect(await readlink(join(target, '..data'))).toBe(first);

    context.objects.set('configmaps/default/settings', configMap({ 'app.conf': 'a=2' }));
    await plugin.setUp(testPod(), volume, target, context);
    expect(await readlink(join(target, '..data'))).not.toBe(first);
    expect(await readFile(join(target, 'app.conf'), 'utf8')).toBe('a=2');
    expect((await readdir(target)).filter((name) => !name.startsWith('..'))).toEqual(['app.conf']);
    expect((await readdir(target)).filter((name) => name.startsWith('..'))).toHaveLength(2);
  });

  it("gives the pod's fsGroup every file, readable by that group, as the kubelet's volume ownership does", async () => {
    const context = fakeContext([secret, configMap({ 'app.conf': 'a=1' })]);
    const volumes = [
      { name: 'creds', secret: { secretName: 'creds', defaultMode: 0o400 } },
      { name: 'both', projected: { defaultMode: 0o600, sources: [{ secret: { name: 'creds' } }, { configMap: { name: 'settings' } }] } },
    ];
    const pod = testPod({ securityContext: { runAsUser: 1000, fsGroup: 1001 } });
    for (const volume of volumes) await pluginFor(volume).setUp(pod, volume, join(dir, volume.name), context);
    const files = [join(dir, 'creds', 'password'), join(dir, 'both', 'password'), join(dir, 'both', 'app.conf')];
    expect(await Promise.all(files.map(mode))).toEqual([0o440, 0o640, 0o640]);
    if (runningAsRoot()) expect(await Promise.all(files.map(async (file) => (await stat(file)).gid))).toEqual([1001, 1001, 1001]);
    // Without an fsGroup the volume's mode stands.
    await pluginFor(volumes[0]!).setUp(testPod(), volumes[0]!, join(dir, 'plain'), context);
    expect(await mode(join(dir, 'plain', 'password'))).toBe(0o400);
  });

  it('projects the items asked for, with their modes, into sub-folders', async () => {
    const context = fakeContext([configMap({ 'app.conf': 'a=1', other: 'b' })]);
    const volume = { name: 'config', configMap: { name: 'settings', items: [{ key: 'app.conf', path: 'etc/app.conf', mode: 0o600 }] } };
    const target = join(dir, 'config');
    await pluginFor(volume).setUp(testPod(), volume, target, context);
    expect((await readdir(target)).filter((name) => !name.startsWith('..'))).toEqual(['etc']);
    expect(await readFile(join(target, 'etc/app.conf'), 'utf8')).toBe('a=1');
    expect(await mode(join(target, 'etc/app.conf'))).toBe(0o600);
  });

  it("fails with Kubernetes' messages for a missing object or key, unless optional", async () => {
    const context = fakeContext([configMap({ present: 'x' })]);
    const missing = { name: 'config', configMap: { name: 'absent' } };
    await expect(pluginFor(missing).setUp(testPod(), missing, join(dir, 'a'), context)).rejects.toThrow('configmap "absent" not found');
    const missingKey = { name: 'config', configMap: { name: 'settings', items: [{ key: 'nope', path: 'nope' }] } };
    await expect(pluginFor(missingKey).setUp(testPod(), missingKey, join(dir, 'b'), context)).rejects.toThrow(
      'configmap references non-existent config key: nope',
    );
    const optional = { name: 'config', configMap: { name: 'absent', optional: true } };
    await pluginFor(optional).setUp(testPod(), optional, join(dir, 'c'), context);
    expect((await readdir(join(dir, 'c'))).sort()).toEqual([expect.stringMatching(/^\.\.\d/), '..data']);
    const secretVolume = { name: 'creds', secret: { secretName: 'absent' } };
    await expect(pluginFor(secretVolume).setUp(testPod(), secretVolume, join(dir, 'd'), context)).rejects.toThrow('secret "absent" not found');
  });

  it('decodes secret values, with the default mode 0644', async () => {
    const volume = { name: 'creds', secret: { secretName: 'creds' } };
    const target = join(dir, 'creds');
    expect(await pluginFor(volume).setUp(testPod(), volume, target, fakeContext([secret]))).toEqual({ readOnly: true });
    expect(await readFile(join(target, 'password'), 'utf8')).toBe('s3cr3t');
    expect(await mode(join(target, 'password'))).toBe(0o644);
    const badKey = { name: 'creds', secret: { secretName: 'creds', items: [{ key: 'user', path: 'user' }] } };
    await expect(pluginFor(badKey).setUp(testPod(), badKey, join(dir, 'x'), fakeContext([secret]))).rejects.toThrow('references non-existent secret key: user');
  });

  it('refuses paths that leave the volume', async () => {
    const volume = { name: 'config', configMap: { name: 'settings', items: [{ key: 'present', path: '../escape' }] } };
    await expect(pluginFor(volume).setUp(testPod(), volume, join(dir, 'config'), fakeContext([configMap({ present: 'x' })]))).rejects.toThrow(
      `invalid path "../escape": must not contain '..'`,
    );
  });
});

describe('downwardAPI and projected', () => {
  it('writes metadata fields and container resources', async () => {
    const volume = {
      name: 'info',
      downwardAPI: {
        items: [
          { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
          { path: 'app', fieldRef: { fieldPath: "metadata.labels['app']" } },
          { path: 'cpu-request', resourceFieldRef: { containerName: 'app', resource: 'requests.cpu', divisor: '1m' } },
          { path: 'mem-limit', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } },
          { path: 'cpu-limit', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu' } },
        ],
      },
    };
    const target = join(dir, 'info');
    await pluginFor(volume).setUp(testPod(), volume, target, fakeContext());
    const read = (name: string) => readFile(join(target, name), 'utf8');
    expect(await read('name')).toBe('web');
    expect(await read('labels')).toBe('app="web"\ntier="front"');
    expect(await read('annotations')).toBe('note="a \\"quoted\\"\\nline"');
    expect(await read('app')).toBe('web');
    expect(await read('cpu-request')).toBe('250');
    expect(await read('mem-limit')).toBe('128');
    // No CPU limit: the node's allocatable, as the kubelet merges it in.
    expect(await read('cpu-limit')).toBe('4');
  });

  it('projects a token bound to the pod, the CA and the namespace, and keeps the token until it needs refreshing', async () => {
    const context = fakeContext([{ ...configMap({}), metadata: { name: 'kube-root-ca.crt', namespace: 'default' }, data: { 'ca.crt': 'CERT' } }]);
    const volume = {
      name: 'kube-api-access-abcde',
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    };
    const plugin = pluginFor(volume);
    expect(plugin.name).toBe(VOLUME_PLUGIN.PROJECTED);
    const target = join(dir, 'token');
    const pod = testPod({ serviceAccountName: 'builder' });
    expect(await plugin.setUp(pod, volume, target, context)).toEqual({ readOnly: true });
    expect(await readFile(join(target, 'token'), 'utf8')).toBe('token-1');
    expect(await readFile(join(target, 'ca.crt'), 'utf8')).toBe('CERT');
    expect(await readFile(join(target, 'namespace'), 'utf8')).toBe('default');
    expect(context.tokenRequests).toEqual([
      {
        name: 'builder',
        namespace: 'default',
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: [], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web' } },
        },
      },
    ]);
    await plugin.setUp(pod, volume, target, context);
    expect(context.tokenRequests).toHaveLength(1);
  });

  it("writes the token as Kubernetes does: its user's alone (0600) or its fsGroup's too (0640) when the pod names them, else with the volume's mode", async () => {
    const volume = {
      name: 'kube-api-access-abcde',
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { path: 'token' } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    };
    const plugin = pluginFor(volume);
    const tokenOf = async (name: string, spec: Partial<Pod['spec']>) => {
      await plugin.setUp(testPod(spec, { name, uid: `uid-${name}` }), volume, join(dir, name), fakeContext());
      return stat(join(dir, name, 'token'));
    };
    const user = await tokenOf('user', { securityContext: { runAsUser: 1234 } });
    const group = await tokenOf('group', { securityContext: { fsGroup: 2345 } });
    const both = await tokenOf('both', { securityContext: { runAsUser: 1234, fsGroup: 2345 } });
    // The image decides the user of a container that names none: any user must be able to read its token.
    const unnamed = await tokenOf('unnamed', {});
    const mixed = await tokenOf('mixed', {
      securityContext: { runAsUser: 1234 },
      containers: [
        { name: 'a', image: 'nginx' },
        { name: 'b', image: 'nginx', securityContext: { runAsUser: 99 } },
      ],
    });
    expect([user, group, both, unnamed, mixed].map((info) => info.mode & 0o7777)).toEqual([0o600, 0o640, 0o640, 0o644, 0o644]);
    if (runningAsRoot()) {
      expect([user.uid, group.gid, both.uid, both.gid]).toEqual([1234, 2345, 1234, 2345]);
    }
    // The other files of the volume keep its mode.
    expect(await mode(join(dir, 'user', 'namespace'))).toBe(0o644);
  });

  it("forgets the pod's tokens when its volume is torn down, also for a pod known by its uid alone", async () => {
    const volume = { name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } };
    const plugin = pluginFor(volume);
    const context = fakeContext();
    const web = testPod();
    const other = testPod({}, { name: 'other', uid: 'uid-web-2' });
    await plugin.setUp(web, volume, join(dir, 'web'), context);
    await plugin.setUp(other, volume, join(dir, 'other'), context);
    expect(context.tokenRequests).toHaveLength(2);

    await plugin.tearDown(web, volume.name, join(dir, 'web'), context);
    await expect(lstat(join(dir, 'web'))).rejects.toThrow(/ENOENT/);
    await plugin.setUp(web, volume, join(dir, 'web'), context);
    expect(context.tokenRequests).toHaveLength(3);
    expect(await readFile(join(dir, 'web/token'), 'utf8')).toBe('token-3');
    // The other pod's token is still held.
    await plugin.setUp(other, volume, join(dir, 'other'), context);
    expect(context.tokenRequests).toHaveLength(3);

    // An orphan the kubelet finds on disk: it has the uid and nothing else.
    const orphan: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { uid: 'uid-web-2' }, spec: { containers: [] } };
    await plugin.tearDown(orphan, volume.name, join(dir, 'other'), context);
    await plugin.setUp(other, volume, join(dir, 'other'), context);
    expect(context.tokenRequests).toHaveLength(4);
  });

  it('refuses a projection it does not know', async () => {
    const volume = { name: 'bundle', projected: { sources: [{ clusterTrustBundle: { name: 'x', path: 'ca' } }] } };
    await expect(pluginFor(volume).setUp(testPod(), volume, join(dir, 'b'), fakeContext())).rejects.toThrow(
      'unsupported projection in volume "bundle": clusterTrustBundle',
    );
  });
});

describe('hostPath', () => {
  it('answers the host path itself, creating folders and files for the …OrCreate types', async () => {
    const made = join(dir, 'made/deep');
    const volume = { name: 'host', hostPath: { path: made, type: 'DirectoryOrCreate' } };
    const plugin = pluginFor(volume);
    expect(await plugin.setUp(testPod(), volume, join(dir, 'unused'), fakeContext())).toEqual({ path: made });
    expect((await stat(made)).isDirectory()).toBe(true);
    await expect(lstat(join(dir, 'unused'))).rejects.toThrow(/ENOENT/);
    const file = join(dir, 'made/file.txt');
    await plugin.setUp(testPod(), { name: 'f', hostPath: { path: file, type: 'FileOrCreate' } }, '', fakeContext());
    expect((await stat(file)).isFile()).toBe(true);
    await plugin.setUp(testPod(), { name: 'any', hostPath: { path: join(dir, 'absent') } }, '', fakeContext());
  });

  it("makes folders 0755 and files 0644 under the server's umask 0077, so containers of any user can use them", async () => {
    const previous = process.umask(0o077);
    try {
      const made = join(dir, 'private/a/b');
      const plugin = pluginFor({ hostPath: { path: made } });
      await plugin.setUp(testPod(), { name: 'd', hostPath: { path: made, type: 'DirectoryOrCreate' } }, '', fakeContext());
      await plugin.setUp(testPod(), { name: 'f', hostPath: { path: join(made, 'f'), type: 'FileOrCreate' } }, '', fakeContext());
      expect(await Promise.all([join(dir, 'private'), join(dir, 'private/a'), made, join(made, 'f')].map(mode))).toEqual([0o755, 0o755, 0o755, 0o644]);
      const volume = { name: 'config', configMap: { name: 'settings', items: [{ key: 'app.conf', path: 'etc/deep/app.conf' }] } };
      const target = join(dir, 'config');
      await pluginFor(volume).setUp(testPod({ securityContext: { runAsUser: 1000 } }), volume, target, fakeContext([configMap({ 'app.conf': 'a=1' })]));
      const payload = join(target, await readlink(join(target, '..data')));
      expect(await Promise.all([target, payload, join(payload, 'etc'), join(payload, 'etc/deep')].map(mode))).toEqual([0o755, 0o755, 0o755, 0o755]);
      expect(await mode(join(target, 'etc/deep/app.conf'))).toBe(0o644);
    } finally {
      process.umask(previous);
    }
  });

  it("checks the type, in Kubernetes' words", async () => {
    const plugin = pluginFor({ hostPath: { path: '/' } });
    const check = (type: string, path: string) => plugin.setUp(testPod(), { name: 'h', hostPath: { path, type } }, '', fakeContext());
    await expect(check('Directory', join(dir, 'absent'))).rejects.toThrow(`hostPath type check failed: ${join(dir, 'absent')} is not a directory`);
    await writeFile(join(dir, 'file'), '');
    await expect(check('Directory', join(dir, 'file'))).rejects.toThrow('is not a directory');
    await expect(check('File', dir)).rejects.toThrow(`hostPath type check failed: ${dir} is not a file`);
    await expect(check('Socket', join(dir, 'file'))).rejects.toThrow('is not a socket file');
    await expect(check('CharDevice', join(dir, 'file'))).rejects.toThrow('is not a character device');
    await expect(check('BlockDevice', join(dir, 'file'))).rejects.toThrow('is not a block device');
    await expect(check('File', 'relative/path')).rejects.toThrow('hostPath relative/path is not an absolute path');
    const socket = join(dir, 'sock');
    const server = createServer().listen(socket);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      await expect(check('Socket', socket)).resolves.toEqual({ path: socket });
    } finally {
      server.close();
    }
  });
});

describe('hostPath on a simulated node', () => {
  it('makes every path under the stand-in root as its type says, never on the machine, and .. cannot climb out', async () => {
    const root = join(dir, 'node', 'host');
    const context = { ...fakeContext(), hostRoot: root };
    const plugin = pluginFor({ hostPath: { path: '/' } });
    const setUp = (path: string, type?: string) => plugin.setUp(testPod(), { name: 'h', hostPath: { path, ...(type ? { type } : {}) } }, '', context);
    const machine = join(dir, 'machine', 'data');
    expect(await setUp(machine, 'DirectoryOrCreate')).toEqual({ path: join(root, machine) });
    await expect(lstat(machine)).rejects.toThrow(/ENOENT/);
    expect((await stat(join(root, machine))).isDirectory()).toBe(true);
    // The simulated node has what its pods expect: a Directory or a File is made, no type means a folder.
    expect((await stat((await setUp('/var/log/pods', 'Directory'))!.path!)).isDirectory()).toBe(true);
    expect((await stat((await setUp('/etc/app/config.yaml', 'File'))!.path!)).isFile()).toBe(true);
    expect((await stat((await setUp('/srv/anything'))!.path!)).isDirectory()).toBe(true);
    await expect(setUp('/run/docker.sock', 'Socket')).resolves.toEqual({ path: join(root, '/run/docker.sock') });
    // What the node already has is checked as on a real node.
    await expect(setUp('/etc/app/config.yaml', 'Directory')).rejects.toThrow('hostPath type check failed: /etc/app/config.yaml is not a directory');
    expect(await setUp('/../../../escape', 'DirectoryOrCreate')).toEqual({ path: join(root, 'escape') });
    await expect(lstat(join(dir, '..', 'escape'))).rejects.toThrow(/ENOENT/);
  });
});

describe('persistentVolumeClaim', () => {
  const claim = (phase: string, volumeName?: string) => ({
    resource: 'persistentvolumeclaims',
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'default' },
    spec: { ...(volumeName ? { volumeName } : {}) },
    status: { phase },
  });
  const volume = { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: true } };

  it("mounts the bound volume's host path", async () => {
    const persistentVolume = {
      resource: 'persistentvolumes',
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1' },
      spec: { hostPath: { path: dir } },
    };
    const result = await pluginFor(volume).setUp(testPod(), volume, join(dir, 'unused'), fakeContext([claim('Bound', 'pvc-1'), persistentVolume]));
    expect(result).toEqual({ path: dir, readOnly: true });
  });

  it('keeps the pod waiting while the claim is missing or unbound', async () => {
    await expect(pluginFor(volume).setUp(testPod(), volume, '', fakeContext())).rejects.toThrow('persistentvolumeclaim "data" not found');
    await expect(pluginFor(volume).setUp(testPod(), volume, '', fakeContext([claim('Pending')]))).rejects.toThrow(
      'PVC default/data has non-bound phase ("Pending") or empty pvc.Spec.VolumeName ("")',
    );
  });
});
