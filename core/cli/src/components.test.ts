import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@skiff/apiserver';
import { readKubeconfig } from '@skiff/client';
import { ADMISSION_STAGE, createCluster, definePlugin, LIFECYCLE_STAGE } from '@skiff/kernel';
import { afterAll, describe, expect, it } from 'vitest';
import { writeComponentKubeconfigs } from './component-kubeconfigs.js';
import { API_SERVER_CONTROLLERS_LEASE, createComponentKernel, parseComponentArgs } from './components.js';
import { pluginComponents } from './roles.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-components-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('skiff controller-manager / scheduler flags', () => {
  it('takes servers comma-separated or repeated, and leader election on unless =false', () => {
    expect(parseComponentArgs(['--server', 'https://10.0.0.1:6443,https://10.0.0.2:6443', '--server', 'https://10.0.0.3:6443'])).toMatchObject({
      servers: ['https://10.0.0.1:6443', 'https://10.0.0.2:6443', 'https://10.0.0.3:6443'],
      leaderElect: true,
    });
    expect(parseComponentArgs(['--leader-elect=false', '--data-dir', 'd', '--preset', 'standard'])).toEqual({
      configFile: undefined,
      overrides: { preset: 'standard', dataDir: 'd', logLevel: undefined },
      servers: undefined,
      kubeconfig: undefined,
      leaderElect: false,
    });
    expect(parseComponentArgs(['--leader-elect']).leaderElect).toBe(true);
  });

  it('says which flag is wrong in one line', () => {
    expect(() => parseComponentArgs(['--server', 'http://10.0.0.1:8080'])).toThrow('--server takes https URLs such as https://10.0.0.1:6443');
    expect(() => parseComponentArgs(['--server', 'nonsense'])).toThrow('(got "nonsense")');
    expect(() => parseComponentArgs(['--leader-elect=maybe'])).toThrow('--leader-elect takes true or false (got "maybe")');
    expect(() => parseComponentArgs(['--port', '6443'])).toThrow("Unknown option '--port'");
    expect(() => parseComponentArgs(['extra'])).toThrow('unexpected argument "extra"');
  });
});

describe('which plugins run in which process', () => {
  const boot = { cwd: process.cwd(), overrides: { preset: 'dev', logLevel: 'silent' } };
  const names = async (components: Parameters<typeof createComponentKernel>[0]) =>
    (await createComponentKernel(components, boot)).kernel.listPlugins().map(({ plugin }) => plugin.name);

  it('splits the dev preset by the hooks each plugin taps', async () => {
    const apiserver = await names(['apiserver']);
    expect(apiserver).toEqual(
      expect.arrayContaining([
        '@skiff/store',
        '@skiff/apiserver',
        '@skiff/plugin-authn-x509',
        '@skiff/plugin-authz-always-allow',
        '@skiff/plugin-apiextensions',
      ]),
    );
    expect(apiserver.filter((name) => /scheduler|kubelet|cri-|controller-(deployment|replicaset)$/.test(name))).toEqual([]);
    // The controllers of plugins that must run with the API server (namespace, host-path binder, bootstrap signer) run
    // there, in a controller manager of the API server's own, under a lease of their own.
    expect(apiserver).toEqual(
      expect.arrayContaining([
        '@skiff/controller-manager',
        '@skiff/plugin-controller-namespace',
        '@skiff/plugin-storage-host-path',
        '@skiff/plugin-controller-bootstrap-signer',
      ]),
    );
    const apiserverKernel = (await createComponentKernel(['apiserver'], boot)).kernel;
    const managerOptions = apiserverKernel.listPlugins().find(({ plugin }) => plugin.name === '@skiff/controller-manager')!.options;
    expect(managerOptions).toMatchObject({ leaderElection: { leaderElect: true, resourceName: API_SERVER_CONTROLLERS_LEASE } });

    const controllers = await names(['controller-manager']);
    expect(controllers).toEqual(
      expect.arrayContaining(['@skiff/controller-manager', '@skiff/plugin-controller-deployment', '@skiff/plugin-controller-replicaset']),
    );
    expect(controllers.every((name) => name === '@skiff/controller-manager' || name.startsWith('@skiff/plugin-controller-'))).toBe(true);

    const scheduler = await names(['scheduler']);
    expect(scheduler).toContain('@skiff/scheduler');
    expect(scheduler.every((name) => name === '@skiff/scheduler' || name.startsWith('@skiff/plugin-scheduler-'))).toBe(true);

    const withKubelets = await names(['apiserver', 'kubelet']);
    expect(withKubelets).toEqual(expect.arrayContaining([...apiserver, '@skiff/kubelet', '@skiff/plugin-cri-simulated']));
    // Every plugin of the preset has exactly one home here, but the controller manager, which also serves the API
    // server's own controllers.
    const all = (await createCluster(boot)).listPlugins().map(({ plugin }) => plugin.name);
    expect([...withKubelets, ...controllers, ...scheduler].sort()).toEqual([...all, '@skiff/controller-manager'].sort());
  });

  it('reads a third-party plugin the same way: a request-path tap wins, several other components share, none is everywhere', async () => {
    const base = { version: '1.0.0', kernel: '*' } as const;
    const plugins = [
      definePlugin({ ...base, name: 'logger-swap', apply: (k) => k.hooks.components.tap('logger-swap', () => undefined) }),
      definePlugin({
        ...base,
        name: 'controllers-and-scores',
        apply(k) {
          k.hooks.controllers.tap('controllers-and-scores', () => undefined);
          k.hooks.schedulerPlugins.tap('controllers-and-scores', () => undefined);
        },
      }),
      definePlugin({
        ...base,
        name: 'admission-with-controller',
        apply(k) {
          k.hooks.mutate.tapPromise({ name: 'admission-with-controller', stage: ADMISSION_STAGE.DEFAULTS }, async () => undefined);
          k.hooks.controllers.tap('admission-with-controller', () => undefined);
        },
      }),
      definePlugin({
        ...base,
        name: 'late-starter',
        apply: (k) => k.lifecycle('late-starter/loop', LIFECYCLE_STAGE.SCHEDULER + 5, { start: () => undefined }),
      }),
      definePlugin({ ...base, name: 'handler-user', needs: ['apiHandler'], apply: () => undefined }),
    ];
    const kernel = await createCluster({ cwd: process.cwd(), config: { preset: 'dev', logLevel: 'silent', plugins } });
    const components = pluginComponents(kernel);
    expect([...components.get('logger-swap')!]).toEqual([]);
    expect([...components.get('controllers-and-scores')!].sort()).toEqual(['controller-manager', 'scheduler']);
    expect([...components.get('admission-with-controller')!]).toEqual(['apiserver']);
    expect([...components.get('late-starter')!]).toEqual(['scheduler']);
    expect([...components.get('handler-user')!]).toEqual(['apiserver']);
    expect([...components.get('@skiff/controller-manager')!]).toEqual(['controller-manager']);
  });
});

describe('component kubeconfigs', () => {
  it('issues client certificates from the cluster CA for the controller manager and the scheduler, and keeps good ones', async () => {
    const dataDir = tempDir();
    const pki = ensurePki(dataDir, '127.0.0.1');
    const files = await writeComponentKubeconfigs(dataDir, 'https://127.0.0.1:6443');
    expect(files).toEqual([join(dataDir, 'controller-manager.kubeconfig'), join(dataDir, 'scheduler.kubeconfig')]);
    const users = files.map((file) => {
      const connection = readKubeconfig(file);
      expect(connection).toMatchObject({ server: 'https://127.0.0.1:6443', caPem: pki.caPem });
      const certificate = new X509Certificate(connection.certPem!);
      expect(certificate.verify(new X509Certificate(pki.caPem).publicKey)).toBe(true);
      return certificate.subject;
    });
    expect(users).toEqual(['CN=system:kube-controller-manager', 'CN=system:kube-scheduler']);

    const before = files.map((file) => readFileSync(file, 'utf8'));
    await writeComponentKubeconfigs(dataDir, 'https://127.0.0.1:6443');
    expect(files.map((file) => readFileSync(file, 'utf8'))).toEqual(before);
    await writeComponentKubeconfigs(dataDir, 'https://10.0.0.1:6443');
    expect(readKubeconfig(files[0]!).server).toBe('https://10.0.0.1:6443');
  });
});
