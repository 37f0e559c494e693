import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// ServiceAccounts in a real `skiff up`, driven by the real kubectl 1.36: every namespace gets its `default`
// ServiceAccount and the `kube-root-ca.crt` ConfigMap (timed), both come back when deleted, and
// `kubectl create token` hands out tokens the API server accepts — until they expire, are meant for someone
// else, or their ServiceAccount or pod is gone.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('serviceaccounts');
const dataDir = join(project, 'data');
const cacheDir = tempDir('serviceaccounts-cache');
const ISSUER = 'https://kubernetes.default.svc.cluster.local';
let skiff: RunningSkiff;
const { kubectl, ok, json } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);
const watches: ChildProcess[] = [];

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
});
afterAll(async () => {
  for (const watch of watches) watch.kill('SIGTERM');
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const uidOf = async (...args: string[]): Promise<string | undefined> => {
  const result = await kubectl([...args, '-o', 'jsonpath={.metadata.uid}']);
  return result.code === 0 ? result.stdout : undefined;
};

/** The cluster CA the kubeconfig trusts: what kube-root-ca.crt must hold. */
function kubeconfigCa(): string {
  const data = /certificate-authority-data:\s*(\S+)/.exec(readFileSync(skiff.kubeconfig, 'utf8'))?.[1];
  if (!data) throw new Error(`no certificate-authority-data in ${skiff.kubeconfig}`);
  return Buffer.from(data, 'base64').toString('utf8');
}

/**
 * A `kubectl get --watch-only` in the background, noting when each line arrived (in this process's clock), so
 * the time between a namespace showing up and its objects showing up is measured the same way on both ends.
 */
function watchLines(args: string[]): { seen: (line: string) => number | undefined } {
  const child = spawn(kubectl136.path, ['--kubeconfig', skiff.kubeconfig, '--cache-dir', cacheDir, 'get', ...args, '--watch-only', '--no-headers'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  watches.push(child);
  const arrivals = new Map<string, number>();
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const now = performance.now();
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const key = line.trim().split(/\s+/).join(' ');
      if (key && !arrivals.has(key)) arrivals.set(key, now);
    }
  });
  return { seen: (line) => arrivals.get(line) };
}

/** A JWT signed with the cluster's key file by hand (node:crypto, not Skiff's code), with the claims given. */
function handSignedToken(claims: Record<string, unknown>): string {
  const key = createPrivateKey(readFileSync(join(dataDir, 'pki', 'sa.key'), 'utf8'));
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode({ alg: 'RS256' })}.${encode(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

function claimsOf(token: string): any {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

describe('default ServiceAccounts and kube-root-ca.crt', () => {
  it('are in the system namespaces, the ConfigMap holding the CA of the kubeconfig', async () => {
    const ca = kubeconfigCa();
    for (const namespace of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      await waitFor(`default ServiceAccount in ${namespace}`, () => uidOf('get', 'serviceaccount', 'default', '-n', namespace), CLUSTER_TIMEOUT);
      const configMap = await waitFor(
        `kube-root-ca.crt in ${namespace}`,
        () => json<{ data?: Record<string, string> }>('get', 'configmap', 'kube-root-ca.crt', '-n', namespace),
        CLUSTER_TIMEOUT,
      );
      expect(configMap.data).toEqual({ 'ca.crt': ca });
    }
    const secrets = await json('get', 'secrets', '-n', 'default');
    expect(secrets.items.filter((s: any) => s.type === 'kubernetes.io/service-account-token')).toEqual([]);
  });

  it('appear in a new namespace within a second', async () => {
    const namespaces = watchLines(['namespaces', '-o', 'custom-columns=NAME:.metadata.name']);
    const accounts = watchLines(['serviceaccounts', '-A', '-o', 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name']);
    const configMaps = watchLines([
      'configmaps',
      '-A',
      '--field-selector',
      'metadata.name=kube-root-ca.crt',
      '-o',
      'custom-columns=NS:.metadata.namespace,NAME:.metadata.name',
    ]);
    // The watches are established once all three report a namespace made after they started, and its objects.
    // A namespace made before a watch began is never reported by it (--watch-only): each try makes a new one.
    const warmups: string[] = [];
    await waitFor(
      'the watches to see a first namespace',
      async () => {
        const seenByAll = warmups.some((ns) => namespaces.seen(ns) && accounts.seen(`${ns} default`) && configMaps.seen(`${ns} kube-root-ca.crt`));
        if (seenByAll) return true;
        if (warmups.length < 20) {
          const next = `sa-warmup-${warmups.length + 1}`;
          warmups.push(next);
          await kubectl(['create', 'namespace', next]);
        }
        return false;
      },
      { timeoutMs: CLUSTER_TIMEOUT.timeoutMs, intervalMs: 250 },
    );

    const delays: { namespace: string; serviceAccountMs: number; configMapMs: number }[] = [];
    for (let i = 1; i <= 5; i++) {
      const namespace = `sa-timed-${i}`;
      await ok('create', 'namespace', namespace);
      const [created, account, configMap] = await waitFor(
        `default and kube-root-ca.crt in ${namespace}`,
        async () => {
          const times = [namespaces.seen(namespace), accounts.seen(`${namespace} default`), configMaps.seen(`${namespace} kube-root-ca.crt`)];
          return times.every((time) => time !== undefined) && (times as number[]);
        },
        CLUSTER_TIMEOUT,
      );
      delays.push({ namespace, serviceAccountMs: Math.round(account! - created!), configMapMs: Math.round(configMap! - created!) });
    }
    console.log(
      `namespace seen → default ServiceAccount / kube-root-ca.crt seen (kubectl 1.36 watches): ${delays
        .map((d) => `${d.serviceAccountMs} / ${d.configMapMs} ms`)
        .join(', ')}`,
    );
    for (const delay of delays) {
      expect(delay.serviceAccountMs).toBeLessThan(1000);
      expect(delay.configMapMs).toBeLessThan(1000);
    }
  });

  it('come back when deleted, and the ConfigMap gets its certificate back when changed', async () => {
    await ok('create', 'namespace', 'sa-restore');
    const account = await waitFor('default in sa-restore', () => uidOf('get', 'serviceaccount', 'default', '-n', 'sa-restore'), CLUSTER_TIMEOUT);
    const configMap = await waitFor('kube-root-ca.crt in sa-restore', () => uidOf('get', 'configmap', 'kube-root-ca.crt', '-n', 'sa-restore'), CLUSTER_TIMEOUT);

    await ok('delete', 'serviceaccount', 'default', '-n', 'sa-restore');
    await ok('delete', 'configmap', 'kube-root-ca.crt', '-n', 'sa-restore');
    await waitFor(
      'a new default ServiceAccount',
      async () => ![undefined, account].includes(await uidOf('get', 'serviceaccount', 'default', '-n', 'sa-restore')),
      CLUSTER_TIMEOUT,
    );
    await waitFor(
      'a new kube-root-ca.crt',
      async () => ![undefined, configMap].includes(await uidOf('get', 'configmap', 'kube-root-ca.crt', '-n', 'sa-restore')),
      CLUSTER_TIMEOUT,
    );

    await ok('patch', 'configmap', 'kube-root-ca.crt', '-n', 'sa-restore', '--type=merge', '-p', '{"data":{"ca.crt":"tampered","extra":"x"}}');
    const ca = kubeconfigCa();
    await waitFor(
      'the certificate restored',
      async () => JSON.stringify((await json('get', 'configmap', 'kube-root-ca.crt', '-n', 'sa-restore')).data) === JSON.stringify({ 'ca.crt': ca }),
      CLUSTER_TIMEOUT,
    );
  });
});

describe('kubectl create token', () => {
  beforeAll(async () => {
    await ok('create', 'namespace', 'sa-tokens');
    await waitFor('default in sa-tokens', () => uidOf('get', 'serviceaccount', 'default', '-n', 'sa-tokens'), CLUSTER_TIMEOUT);
  });

  it('returns a token that authenticates as the ServiceAccount (kubectl auth whoami)', async () => {
    const token = (await ok('create', 'token', 'default', '-n', 'sa-tokens')).trim();
    const claims = claimsOf(token);
    expect(claims).toMatchObject({ iss: ISSUER, aud: [ISSUER], sub: 'system:serviceaccount:sa-tokens:default' });
    expect(claims.exp - claims.iat).toBe(3600);

    const table = await ok('--token', token, 'auth', 'whoami');
    expect(table).toMatch(/Username\s+system:serviceaccount:sa-tokens:default/);
    expect(table).toMatch(/Groups\s+\[system:serviceaccounts system:serviceaccounts:sa-tokens system:authenticated\]/);
    const review = await json('--token', token, 'auth', 'whoami');
    expect(review.status.userInfo.uid).toBe(await uidOf('get', 'serviceaccount', 'default', '-n', 'sa-tokens'));
  });

  it('honours --duration, and a token for another --audience is refused here (401)', async () => {
    const long = (await ok('create', 'token', 'default', '-n', 'sa-tokens', '--duration', '2h')).trim();
    const claims = claimsOf(long);
    expect(claims.exp - claims.iat).toBe(7200);

    const vault = (await ok('create', 'token', 'default', '-n', 'sa-tokens', '--audience', 'vault')).trim();
    expect(claimsOf(vault).aud).toEqual(['vault']);
    const refused = await kubectl(['--token', vault, 'auth', 'whoami']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`service account token audiences ["vault"] are not accepted here (want one of ["${ISSUER}"])`);
  });

  it('refuses an expired token (401)', async () => {
    const uid = await uidOf('get', 'serviceaccount', 'default', '-n', 'sa-tokens');
    const issued = Math.floor(Date.now() / 1000) - 7200;
    const binding = { namespace: 'sa-tokens', serviceaccount: { name: 'default', uid } };
    const claims = { iss: ISSUER, sub: 'system:serviceaccount:sa-tokens:default', aud: [ISSUER], iat: issued, nbf: issued, 'kubernetes.io': binding };
    // The same hand-signed token is accepted while it is current, so what refuses the expired one is its expiry.
    expect(await ok('--token', handSignedToken({ ...claims, exp: issued + 86400 }), 'auth', 'whoami')).toContain('system:serviceaccount:sa-tokens:default');
    const expired = await kubectl(['--token', handSignedToken({ ...claims, exp: issued + 3600 }), 'auth', 'whoami']);
    expect(expired.code).not.toBe(0);
    expect(expired.stderr).toContain('error: You must be logged in to the server (Unauthorized: ');
    expect(expired.stderr).toContain('service account token has expired');
  });

  it('refuses a token once its ServiceAccount is deleted, even after one of the same name is created again (401)', async () => {
    await ok('create', 'serviceaccount', 'robot', '-n', 'sa-tokens');
    const token = (await ok('create', 'token', 'robot', '-n', 'sa-tokens')).trim();
    expect(await ok('--token', token, 'auth', 'whoami')).toContain('system:serviceaccount:sa-tokens:robot');
    await ok('delete', 'serviceaccount', 'robot', '-n', 'sa-tokens');
    const gone = await kubectl(['--token', token, 'get', '--raw', '/api']);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('service account sa-tokens/robot has been deleted');
    await ok('create', 'serviceaccount', 'robot', '-n', 'sa-tokens');
    const replaced = await kubectl(['--token', token, 'auth', 'whoami']);
    expect(replaced.code).not.toBe(0);
    expect(replaced.stderr).toContain('service account sa-tokens/robot has been deleted and created again');
  });

  it('binds a token to a pod (--bound-object-kind Pod) and refuses it once the pod is gone', async () => {
    await ok('run', 'web', '-n', 'sa-tokens', '--image=nginx');
    const podUid = await waitFor('the pod', () => uidOf('get', 'pod', 'web', '-n', 'sa-tokens'), CLUSTER_TIMEOUT);
    const token = (await ok('create', 'token', 'default', '-n', 'sa-tokens', '--bound-object-kind', 'Pod', '--bound-object-name', 'web')).trim();
    expect(claimsOf(token)['kubernetes.io'].pod).toEqual({ name: 'web', uid: podUid });
    const review = await json('--token', token, 'auth', 'whoami');
    expect(review.status.userInfo.extra).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['web'],
      'authentication.kubernetes.io/pod-uid': [podUid],
    });
    await ok('delete', 'pod', 'web', '-n', 'sa-tokens', '--grace-period=0', '--force');
    await waitFor('the pod to be gone', async () => (await uidOf('get', 'pod', 'web', '-n', 'sa-tokens')) === undefined, CLUSTER_TIMEOUT);
    const refused = await kubectl(['--token', token, 'auth', 'whoami']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('pod sa-tokens/web has been deleted');
  });

  it('tokens verify against the issuer discovery documents', async () => {
    const configuration = JSON.parse(await ok('get', '--raw', '/.well-known/openid-configuration'));
    expect(configuration).toMatchObject({ issuer: ISSUER, jwks_uri: `${ISSUER}/openid/v1/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
    const { keys } = JSON.parse(await ok('get', '--raw', '/openid/v1/jwks'));
    const token = (await ok('create', 'token', 'default', '-n', 'sa-tokens')).trim();
    const [header, payload, signature] = token.split('.');
    const key = keys.find((k: any) => k.kid === JSON.parse(Buffer.from(header!, 'base64url').toString()).kid);
    expect(verify('sha256', Buffer.from(`${header}.${payload}`), createPublicKey({ key, format: 'jwk' }), Buffer.from(signature!, 'base64url'))).toBe(true);
  });
});

describe('kubectl cluster-info', () => {
  it('prints the control plane line and exits 0', async () => {
    const result = await kubectl(['cluster-info']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Kubernetes control plane is running at ${skiff.server}`);
  });
});
