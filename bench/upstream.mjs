// Upstream's side of the benchmarks that compare against Kubernetes itself: Debian's etcd, one member on loopback
// with its data under a folder the caller makes and removes (fsync on, as in production), and upstream's
// kube-apiserver v1.28.7 on it (UPSTREAM_APISERVER, default /root/upstream/bin/kube-apiserver; see
// ../shared/upstream/README.md), with a throwaway PKI made by openssl and one bearer token in system:masters.
// Also the small HTTPS helpers the benchmarks share: waitFor and call.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { request, Agent } from 'node:https';
import { join } from 'node:path';
import { freePort } from '../scripts/free-port.mjs';

export { freePort };

export const UPSTREAM_APISERVER = process.env.UPSTREAM_APISERVER ?? '/root/upstream/bin/kube-apiserver';
export const ETCD_BINARY = process.env.SKIFF_ETCD_BINARY ?? '/usr/bin/etcd';

/** Polls `check` every 100 ms until it answers true (a throw counts as not yet); throws after `timeoutMs`. */
export async function waitFor(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One etcd member with its data in `dir/etcd`; answers its client `endpoint`, its `pid`, `exited` and `stop()`. */
export async function startEtcd(dir) {
  const [client, peer] = [await freePort(), await freePort()];
  const child = spawn(
    ETCD_BINARY,
    [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      '--log-level=error',
      '--logger=zap',
    ],
    { stdio: 'ignore' },
  );
  const endpoint = `http://127.0.0.1:${client}`;
  await waitFor('etcd', async () => (await (await fetch(`${endpoint}/health`)).json()).health === 'true');
  return { endpoint, pid: child.pid, exited: new Promise((resolve) => child.once('exit', resolve)), stop: () => child.kill('SIGKILL') };
}

/** An HTTPS request with a bearer token; answers status and the whole body as text. */
export function call(agent, url, { method = 'GET', body, token } = {}) {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A CA, a serving certificate for 127.0.0.1, the service-account key pair and the token file, in `dir/pki`. */
export function upstreamPki(dir) {
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true });
  const openssl = (...args) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(pki, 'ca.key'), '-out', join(pki, 'ca.crt'), '-days', '2', '-subj', '/CN=bench-ca');
  writeFileSync(join(pki, 'ext.cnf'), 'subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(pki, 'apiserver.key'), '-out', join(pki, 'apiserver.csr'), '-subj', '/CN=kube-apiserver');
  openssl(
    'x509',
    '-req',
    '-in',
    join(pki, 'apiserver.csr'),
    '-CA',
    join(pki, 'ca.crt'),
    '-CAkey',
    join(pki, 'ca.key'),
    '-CAcreateserial',
    '-out',
    join(pki, 'apiserver.crt'),
    '-days',
    '2',
    '-extfile',
    join(pki, 'ext.cnf'),
  );
  openssl('genrsa', '-out', join(pki, 'sa.key'), '2048');
  openssl('rsa', '-in', join(pki, 'sa.key'), '-pubout', '-out', join(pki, 'sa.pub'));
  writeFileSync(join(pki, 'tokens.csv'), 'bench-token,bench,bench-uid,"system:masters"\n');
  return pki;
}

/**
 * Upstream's kube-apiserver v1.28.7 on the etcd at `etcdEndpoint` under its own prefix, token auth, no priority and
 * fairness (as Skiff's bench server). Answers `url`, `ca`, `token`, its `pid`, `exited` and `stop()`, once its own bootstrap
 * (the default namespace) has settled.
 */
export async function startUpstream(dir, etcdEndpoint) {
  const pki = upstreamPki(dir);
  const port = await freePort();
  const child = spawn(
    UPSTREAM_APISERVER,
    [
      `--etcd-servers=${etcdEndpoint}`,
      '--etcd-prefix=/upstream-bench',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(pki, 'apiserver.key')}`,
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      '--authorization-mode=AlwaysAllow',
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=1000',
      '--max-mutating-requests-inflight=1000',
      '--v=0',
    ],
    { stdio: 'ignore' },
  );
  const server = { url: `https://127.0.0.1:${port}`, ca: readFileSync(join(pki, 'ca.crt'), 'utf8'), token: 'bench-token' };
  const agent = new Agent({ ca: server.ca });
  await waitFor('kube-apiserver', async () => (await call(agent, `${server.url}/readyz`, { token: server.token })).status === 200, 120_000);
  // Its own bootstrap (default namespace, priority classes) settles first.
  await waitFor(
    'the default namespace',
    async () => (await call(agent, `${server.url}/api/v1/namespaces/default`, { token: server.token })).status === 200,
    60_000,
  );
  agent.destroy();
  return { ...server, pid: child.pid, exited: new Promise((resolve) => child.once('exit', resolve)), stop: () => child.kill('SIGTERM') };
}
