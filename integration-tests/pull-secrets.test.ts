import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions, podRunning, waitForPod } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { unreachableRoutes } from './routes.js';
import { buildTestImages, missingPrerequisites, pushTestImages, startRegistry, type TestRegistry } from '../scripts/test-images.mjs';

// Image pull secrets on a real one-machine cluster (`skiff up --preset local`): Debian's docker-registry on a
// loopback port asks for basic auth (an htpasswd file with a bcrypt entry), the busybox test image is pushed
// there with credentials, and pods pull it with or without `imagePullSecrets`. Real containers need root, so
// without root this file skips and says why; missing Debian packages are a failure.

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('pull-secrets.test.ts skipped: real containers need root (the dev preset runs simulated ones)');

const PYTHON = '/usr/bin/python3';
const USER = 'u';
const PASSWORD = 'pw';
const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('pull-secrets');
const cacheDir = tempDir('pull-secrets-cache');
const WAIT = { timeoutMs: 60_000, intervalMs: 200 };
let skiff: RunningSkiff;
let registry: TestRegistry;
let busybox = '';
const { ok, json, apply } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

/** An htpasswd line for docker-registry, which takes bcrypt only: Python's crypt makes `$2b$` hashes (cost 4 keeps logins fast). */
function htpasswdLine(user: string, password: string): string {
  const script = 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))';
  const hash = execFileSync(PYTHON, ['-W', 'ignore::DeprecationWarning', '-c', script, password], { encoding: 'utf8' }).trim();
  if (!/^\$2[by]\$/.test(hash)) throw new Error(`${PYTHON} made no bcrypt hash (it said ${JSON.stringify(hash)})`);
  return `${user}:${hash}\n`;
}

const pullFailed = (pod: any) => ['ErrImagePull', 'ImagePullBackOff'].includes(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason);

function podManifest(name: string, pullSecrets: string[]): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  ${pullSecrets.length ? `imagePullSecrets: [${pullSecrets.map((secret) => `{name: ${secret}}`).join(', ')}]` : ''}
  containers:
  - name: app
    image: ${busybox}
    imagePullPolicy: Always
    command: ["sh", "-c", "echo pulled with credentials; exec sleep 3600"]
`;
}

/** Waits until the pod's events (as `kubectl get events` prints them) match every pattern; returns them. */
async function eventsMatching(name: string, ...patterns: RegExp[]): Promise<string> {
  return waitFor(
    `events of pod ${name}`,
    async () => {
      const events = await ok('get', 'events', '--field-selector', `involvedObject.name=${name}`);
      const absent = patterns.filter((pattern) => !pattern.test(events));
      if (absent.length) throw new Error(`no ${absent.join(', ')} in:\n${events}`);
      return events;
    },
    WAIT,
  );
}

const UNAUTHORIZED = /Failed to pull image ".*skiff\/busybox:1": .*401 Unauthorized/;

let removeRoutes: (() => void) | undefined;

beforeAll(async () => {
  if (notRoot) return;
  // Addresses of the service and pod ranges that nothing here serves fail at once instead of leaving the machine.
  removeRoutes = unreachableRoutes();
  const missing = missingPrerequisites({ registry: true });
  if (!existsSync(PYTHON)) missing.push(`${PYTHON} (Debian package python3), for the registry's bcrypt htpasswd`);
  if (missing.length) throw new Error(`pull secrets on real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
  const out = join(project, 'images');
  const images = await buildTestImages({ out });
  const htpasswd = join(project, 'htpasswd');
  writeFileSync(htpasswd, htpasswdLine(USER, PASSWORD), { mode: 0o600 });
  registry = await startRegistry({ out, auth: { htpasswd } });
  expect(registry.started).toBe(true);
  await pushTestImages(images, registry.address, { auth: { username: USER, password: PASSWORD } });
  busybox = `${registry.address}/skiff/busybox:1`;
  skiff = await startSkiff(['--preset', 'local', '--data-dir', join(project, 'data')], { cwd: project, timeoutMs: 60_000 });
}, 120_000);

afterAll(async () => {
  removeRoutes?.();
  await skiff?.stop();
  await registry?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe.skipIf(notRoot)('image pull secrets with a registry that wants a login', () => {
  it("a pod without a pull secret cannot pull: ErrImagePull / ImagePullBackOff with the registry's 401", async () => {
    await apply(podManifest('anonymous', []));
    const pod = await waitForPod(json, 'anonymous', pullFailed, 'failed to pull');
    expect(pod.status.phase).toBe('Pending');
    await eventsMatching('anonymous', UNAUTHORIZED);
    await ok('delete', 'pod', 'anonymous', '--grace-period=0', '--force');
  });

  it('a wrong password fails alike, and a missing secret is a FailedToRetrieveImagePullSecret warning', async () => {
    await ok('create', 'secret', 'docker-registry', 'wrongcred', `--docker-server=${registry.address}`, `--docker-username=${USER}`, '--docker-password=nope');
    await apply(podManifest('wrong', ['wrongcred', 'absent']));
    await waitForPod(json, 'wrong', pullFailed, 'failed to pull');
    await eventsMatching(
      'wrong',
      /FailedToRetrieveImagePullSecret\s+pod\/wrong\s+Unable to retrieve some image pull secrets \(absent\); attempting to pull the image may not succeed\./,
      UNAUTHORIZED,
    );
    await ok('delete', 'pod', 'wrong', '--grace-period=0', '--force');
  });

  it('with `kubectl create secret docker-registry regcred` in imagePullSecrets the pod pulls and runs', async () => {
    expect(
      await ok(
        'create',
        'secret',
        'docker-registry',
        'regcred',
        `--docker-server=${registry.address}`,
        `--docker-username=${USER}`,
        `--docker-password=${PASSWORD}`,
      ),
    ).toBe('secret/regcred created\n');
    await apply(podManifest('private', ['regcred']));
    const pod = await waitForPod(json, 'private', podRunning, 'ran');
    expect(pod.status.containerStatuses[0].imageID).toMatch(/sha256:[0-9a-f]{64}$/);
    await waitFor('its log', async () => (await ok('logs', 'private')) === 'pulled with credentials\n', WAIT);
    await eventsMatching('private', /Successfully pulled image ".*skiff\/busybox:1"/);
    await ok('delete', 'pod', 'private', '--grace-period=0', '--force');
  });
});
