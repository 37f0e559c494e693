import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostAddress } from '@skiff/kernel';
import { kubectlOn, kubectlVersions, podRunning, waitForPod } from './clients.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';
import { unreachableRoutes } from './routes.js';
import { buildTestImages, missingPrerequisites, pushTestImages, startRegistry, type TestRegistry } from '../scripts/test-images.mjs';
import { freePort } from '../scripts/free-port.mjs';

// Pods talk to Services on the local preset: the nftables service proxy carries ClusterIPs and NodePorts to real
// containers, and the cluster DNS server answers the pods' names, driven by kubectl 1.36. The only traffic is on
// this machine: the service and pod ranges get `unreachable` routes for the whole file, the cluster's upstream
// resolver is Debian's unbound on loopback (serving one outside name), and nothing dials an outside address.

const notRoot = process.getuid?.() !== 0;
if (notRoot) console.log('service-traffic.test.ts skipped: real containers and nftables need root');

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('svc-traffic');
const cacheDir = tempDir('svc-traffic-cache');
const dataDir = join(project, 'data');
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };
const TABLE = 'skiff-proxy';
const OUTSIDE = { name: 'outside.test', address: '198.51.100.7' };
let skiff: RunningSkiff | undefined;
let registry: TestRegistry;
let unbound: ChildProcess | undefined;
let removeRoutes: (() => void) | undefined;
let busybox = '';
let curl = '';
const { kubectl, ok, json, apply } = kubectlOn(kubectl136.path, () => skiff!.kubeconfig, cacheDir);

/** Debian's unbound on a loopback port, answering one outside name from local data: the cluster's "host resolver". */
async function startUnbound(): Promise<number> {
  const port = await freePort();
  const config = join(project, 'unbound.conf');
  writeFileSync(
    config,
    `server:
  interface: 127.0.0.1
  port: ${port}
  do-daemonize: no
  use-syslog: no
  username: ""
  chroot: ""
  directory: "${project}"
  pidfile: ""
  num-threads: 1
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  local-zone: "test." static
  local-data: "${OUTSIDE.name}. 60 IN A ${OUTSIDE.address}"
remote-control:
  control-enable: no
`,
  );
  unbound = spawn('unbound', ['-d', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  unbound.stderr!.on('data', (d: Buffer) => (said += d.toString()));
  await waitFor(
    `unbound to answer on 127.0.0.1:${port} (it said: ${said})`,
    async () => {
      if (unbound!.exitCode !== null) throw new Error(`unbound exited with ${unbound!.exitCode}: ${said}`);
      return probeUdp(port);
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  return port;
}

/** True once something answers DNS on 127.0.0.1:port (Node's resolver, which never uses the machine's own). */
async function probeUdp(port: number): Promise<boolean> {
  const { Resolver } = await import('node:dns/promises');
  const resolver = new Resolver({ timeout: 300, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return resolver.resolve4(OUTSIDE.name).then(
    (addresses) => addresses.includes(OUTSIDE.address),
    () => false,
  );
}

const config = (upstreamPort: number) => `export default {
  preset: 'local',
  plugins: [['@skiff/plugin-dns', { upstream: ['127.0.0.1:${upstreamPort}'] }]],
};
`;

/** Runs a shell script in the client pod; returns its output (stdout and stderr) and exit code. */
async function inClient(script: string, pod = 'client'): Promise<{ code: number | null; out: string }> {
  const result = await kubectl(['exec', pod, '--', 'sh', '-c', `${script} 2>&1`]);
  return { code: result.code, out: result.stdout };
}

/** `count` HTTP requests from the client pod to `url`: the bodies, one line each (a backend answers its hostname). */
async function answers(url: string, count: number, pod = 'client'): Promise<string[]> {
  const { code, out } = await inClient(`i=0; while [ $i -lt ${count} ]; do curl -sS --max-time 5 ${url} || exit 1; i=$((i+1)); done 2>&1`, pod);
  expect({ url, code, out: code === 0 ? '' : out }).toEqual({ url, code: 0, out: '' });
  return out.split('\n').filter(Boolean);
}

/** What of Skiff's is on this machine's network: the proxy's table, the bridges, rules that name them. */
function skiffLeftovers(): string[] {
  const left: string[] = [];
  const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
  if (tables.includes(`ip ${TABLE}`)) left.push(`nftables table ip ${TABLE}`);
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
  for (const match of links.matchAll(/^\d+: (skiff\d+)[:@]/gm)) left.push(`link ${match[1]}`);
  const nat = execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' });
  for (const line of nat.split('\n')) if (/skiff\d/.test(line) && line.startsWith('-A')) left.push(`iptables ${line}`);
  return left;
}

const WEB = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: httpd
          image: ${image}
          command: ['sh', '-c', 'hostname > /www/index.html; exec httpd -f -p 8080 -h /www']
          ports: [{ name: http, containerPort: 8080 }]
          readinessProbe: { httpGet: { path: /, port: 8080 }, periodSeconds: 1 }
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: NodePort
  selector: { app: web }
  ports: [{ name: http, port: 80, targetPort: http }]
`;

const CLIENT = (image: string) => `apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: client
      image: ${image}
      command: ['sleep', '3600']
`;

const HAIRPIN = (image: string) => `apiVersion: v1
kind: Pod
metadata:
  name: loop
  labels: { app: hairpin }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: both
      image: ${image}
      command: ['sh', '-c', 'hostname > /www/index.html; exec httpd -f -p 8080 -h /www']
---
apiVersion: v1
kind: Service
metadata:
  name: hairpin
spec:
  selector: { app: hairpin }
  ports: [{ port: 80, targetPort: 8080 }]
`;

const DB = (image: string) => `apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  clusterIP: None
  selector: { app: db }
  ports: [{ name: http, port: 8080 }]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: { app: db }
  template:
    metadata:
      labels: { app: db }
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: httpd
          image: ${image}
          command: ['sh', '-c', 'hostname > /www/index.html; exec httpd -f -p 8080 -h /www']
---
apiVersion: v1
kind: Service
metadata:
  name: ext
spec:
  type: ExternalName
  externalName: ${OUTSIDE.name}
`;

/** The Service's endpoints in its EndpointSlices: the ready ones, or all of them (terminating ones too). */
async function endpoints(service: string, which: 'ready' | 'all' = 'ready'): Promise<number> {
  const slices = await json('get', 'endpointslices', '-l', `kubernetes.io/service-name=${service}`);
  const all = (slices.items as any[]).flatMap((slice) => slice.endpoints ?? []);
  return which === 'all' ? all.length : all.filter((endpoint: any) => endpoint.conditions?.ready).length;
}
const readyEndpoints = (service: string) => endpoints(service, 'ready');

beforeAll(async () => {
  if (notRoot) return;
  const missing = missingPrerequisites({ registry: true });
  if (missing.length) throw new Error(`real containers need: ${missing.join('; ')} (bash scripts/install-system-deps.sh)`);
  removeRoutes = unreachableRoutes();
  const images = await buildTestImages({ out: join(project, 'images') });
  registry = await startRegistry({ out: join(project, 'images') });
  await pushTestImages(images, registry.address);
  busybox = `${registry.address}/skiff/busybox:1`;
  curl = `${registry.address}/skiff/curl:1`;
  writeFileSync(join(project, 'skiff.config.mjs'), config(await startUnbound()));
  skiff = await startSkiff(['--data-dir', dataDir], { cwd: project, timeoutMs: 90_000, detached: true });
  await apply(WEB(busybox));
  await apply(CLIENT(curl));
  await apply(HAIRPIN(curl));
  await apply(DB(busybox));
  await waitForPod(json, 'client', podRunning, 'started', WAIT);
  await waitFor('3 ready web endpoints', async () => (await readyEndpoints('web')) === 3, WAIT);
}, 180_000);

afterAll(async () => {
  await skiff?.stop();
  unbound?.kill('SIGTERM');
  await registry?.stop();
  removeRoutes?.();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe.skipIf(notRoot)('Services carry traffic and pods resolve names (local preset)', () => {
  it("reports this machine's address as the node's InternalIP and the pods' hostIP, and points pods at the cluster DNS", async () => {
    const node = await json('get', 'node', 'node-1');
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: hostAddress() });
    expect((await json('get', 'pod', 'client')).status.hostIP).toBe(hostAddress());
    const dns = await json('get', 'service', 'kube-dns', '-n', 'kube-system');
    expect(dns.spec.clusterIP).toBe('10.96.0.10');
    const resolvConf = (await inClient('cat /etc/resolv.conf')).out;
    expect(resolvConf).toContain('nameserver 10.96.0.10');
    expect(resolvConf).toMatch(/^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local/m);
    expect(resolvConf).toContain('ndots:5');
  });

  it('reaches the Service by its short, namespaced and full name, spread over all 3 backends', async () => {
    const backends = (await json('get', 'pods', '-l', 'app=web')).items.map((pod: any) => pod.metadata.name).sort();
    for (const name of ['web', 'web.default', 'web.default.svc.cluster.local']) {
      const seen = new Set(await answers(`http://${name}`, 30));
      expect({ name, seen: [...seen].sort() }).toEqual({ name, seen: backends });
    }
  });

  it('pins a client to one backend with sessionAffinity ClientIP, and spreads again without it', async () => {
    await ok('patch', 'service', 'web', '-p', '{"spec":{"sessionAffinity":"ClientIP"}}');
    await waitFor('one backend for every request', async () => new Set(await answers('http://web', 10)).size === 1, WAIT);
    await ok('patch', 'service', 'web', '-p', '{"spec":{"sessionAffinity":"None"}}');
    await waitFor('requests spread again', async () => new Set(await answers('http://web', 20)).size > 1, WAIT);
  });

  it('answers a NodePort on the node address from the host', async () => {
    const service = await json('get', 'service', 'web');
    const nodePort = service.spec.ports[0].nodePort;
    const backends = new Set((await json('get', 'pods', '-l', 'app=web')).items.map((pod: any) => pod.metadata.name));
    for (let i = 0; i < 5; i++) {
      const body = await (await fetch(`http://${hostAddress()}:${nodePort}/`, { signal: AbortSignal.timeout(5000) })).text();
      expect(backends.has(body.trim())).toBe(true);
    }
  });

  it('lets a pod reach itself through its own Service (hairpin)', async () => {
    // The pod is not named like its Service: /etc/hosts gives a pod's own name its own address.
    await waitForPod(json, 'loop', podRunning, 'started', WAIT);
    await waitFor('the hairpin endpoint', async () => (await readyEndpoints('hairpin')) === 1, WAIT);
    expect(await answers('http://hairpin', 3, 'loop')).toEqual(['loop', 'loop', 'loop']);
  });

  it("resolves a headless StatefulSet's pods by name, SRV records for named ports, and an ExternalName as CNAME", async () => {
    await waitFor('2 ready db endpoints', async () => (await readyEndpoints('db')) === 2, WAIT);
    expect(await answers('http://db-0.db:8080', 1)).toEqual(['db-0']);
    expect(await answers('http://db-1.db.default.svc.cluster.local:8080', 1)).toEqual(['db-1']);
    const headless = await inClient('getent ahostsv4 db.default.svc.cluster.local');
    const dbIPs = (await json('get', 'pods', '-l', 'app=db')).items.map((pod: any) => pod.status.podIP).sort();
    expect(
      [
        ...new Set(
          headless.out
            .split('\n')
            .filter(Boolean)
            .map((line) => line.split(/\s+/)[0]),
        ),
      ].sort(),
    ).toEqual(dbIPs);

    const srv = await inClient('nslookup -type=srv _http._tcp.web.default.svc.cluster.local');
    expect(srv.out).toMatch(/0 100 80 web\.default\.svc\.cluster\.local/);
    const headlessSrv = await inClient('nslookup -type=srv _http._tcp.db.default.svc.cluster.local');
    expect(headlessSrv.out).toMatch(/8080 db-0\.db\.default\.svc\.cluster\.local/);
    expect(headlessSrv.out).toMatch(/8080 db-1\.db\.default\.svc\.cluster\.local/);

    const cname = await inClient('nslookup -type=cname ext.default.svc.cluster.local');
    expect(cname.out).toMatch(new RegExp(`canonical name = ${OUTSIDE.name.replace('.', '\\.')}`));
  });

  it("resolves names outside the cluster through the host's resolvers (here: unbound on loopback), after the search list", async () => {
    const outside = await inClient(`getent hosts ${OUTSIDE.name}`);
    expect(outside).toEqual({ code: 0, out: `${OUTSIDE.address}    ${OUTSIDE.name}\n` });
    const missing = await inClient('getent hosts nothing-here.test');
    expect(missing.code).toBe(2);
  });

  it('refuses a connection at once when the Service has no endpoints, and an address of the service range no Service holds', async () => {
    await ok('scale', 'deployment', 'web', '--replicas=0');
    // Terminating pods still serve (the proxy falls back to them) until they are gone.
    await waitFor('no web endpoints, terminating ones included', async () => (await endpoints('web', 'all')) === 0, WAIT);
    // curl's exit code 7 is "couldn't connect"; a timeout would be 28. The time is curl's own (-w time_total).
    const refused = (url: string) => inClient(`curl -sS --max-time 10 -o /dev/null -w 'took=%{time_total}\\n' ${url}; echo "exit=$?"`);
    await waitFor(
      'a refused connection',
      async () => {
        const { out } = await refused('http://web');
        if (!out.includes('exit=7')) throw new Error(`curl said: ${out}`);
        return true;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    for (const url of ['http://web', 'http://10.111.222.33/']) {
      const { out } = await refused(url);
      expect({ url, exit: /exit=(\d+)/.exec(out)?.[1] }).toEqual({ url, exit: '7' });
      expect(Number(/took=([\d.]+)/.exec(out)?.[1])).toBeLessThan(1);
    }
  });

  it('leaves no table, chain, link or rule of its own after a stop, and after a kill -9 and the next start and stop', async () => {
    expect(execFileSync('nft', ['list', 'table', 'ip', TABLE], { encoding: 'utf8' })).toContain('chain');
    expect(await skiff!.stop()).toBe(0);
    skiff = undefined;
    expect(skiffLeftovers()).toEqual([]);

    const again = await startSkiff(['--data-dir', dataDir], { cwd: project, timeoutMs: 90_000, detached: true });
    skiff = again;
    await waitForPod(json, 'client', podRunning, 'started again', WAIT);
    expect(execFileSync('nft', ['list', 'table', 'ip', TABLE], { encoding: 'utf8' })).toContain('chain');
    again.process.kill('SIGKILL');
    await new Promise((resolveExit) => again.process.once('exit', resolveExit));
    skiff = await startSkiff(['--data-dir', dataDir], { cwd: project, timeoutMs: 90_000, detached: true });
    await waitForPod(json, 'client', podRunning, 'started after the kill', WAIT);
    // The stop stopped every pod (podsOnShutdown: stop): the start runs them again.
    await waitForPod(json, 'loop', (pod) => podRunning(pod) && pod.status.containerStatuses[0].ready, 'started after the kill', WAIT);
    await waitFor('the hairpin Service to answer again', async () => (await answers('http://hairpin', 1, 'client'))[0] === 'loop', WAIT);
    expect(await skiff.stop()).toBe(0);
    skiff = undefined;
    expect(skiffLeftovers()).toEqual([]);
  });
});
