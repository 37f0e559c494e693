import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlVersions, runProgram } from './clients.js';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

const KUBECTL = kubectlVersions().find((binary) => binary.minor === 36)!.path;

/** kubectl 1.36 against one cluster. */
class Kubectl136 {
  readonly cacheDir = tempDir('kubectl-cache');
  constructor(readonly kubeconfig: string) {}

  run(args: string[], input?: string) {
    return runProgram(KUBECTL, ['--kubeconfig', this.kubeconfig, '--cache-dir', this.cacheDir, ...args], { input });
  }

  async ok(...args: string[]): Promise<string> {
    const result = await this.run(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\n${result.stderr}${result.stdout}`);
    return result.stdout;
  }

  /** Runs expecting failure; answers kubectl's error line. */
  async fails(...args: string[]): Promise<string> {
    const result = await this.run(args);
    if (result.code === 0) throw new Error(`kubectl ${args.join(' ')} succeeded:\n${result.stdout}`);
    return result.stderr.trim();
  }

  async json<T = any>(...args: string[]): Promise<T> {
    return JSON.parse(await this.ok(...args, '-o', 'json')) as T;
  }
}

const inRange = (ip: string) => {
  const [a, b] = ip.split('.').map(Number);
  return a === 10 && b! >= 96 && b! <= 111;
};

const manifest = (names: string[]) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: names.map((name) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }] } })),
  });

describe('Service addresses through kubectl 1.36', () => {
  const project = tempDir('services');
  const dataDir = join(project, 'data');
  let skiff: RunningSkiff;
  let kubectl: Kubectl136;
  const start = async () => {
    skiff = await startSkiff(['--data-dir', dataDir], { cwd: project });
    kubectl = new Kubectl136(skiff.kubeconfig);
  };

  beforeAll(async () => {
    await start();
  });
  afterAll(async () => {
    await skiff?.stop();
    rmSync(project, { recursive: true, force: true });
  });

  it('serves the kubernetes Service at 10.96.0.1 with Endpoints and an EndpointSlice naming the API server', async () => {
    const port = Number(new URL(skiff.server).port);
    const service = await kubectl.json('get', 'service', 'kubernetes');
    expect(service.spec).toMatchObject({ clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] });
    expect(await kubectl.ok('get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.subsets[0].addresses[0].ip}:{.subsets[0].ports[0].port}')).toBe(
      `127.0.0.1:${port}`,
    );
    const slice = await kubectl.json('get', 'endpointslice', 'kubernetes');
    expect(slice.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    expect(slice.endpoints).toEqual([{ addresses: ['127.0.0.1'], conditions: { ready: true } }]);
    const cidr = await kubectl.json('get', 'servicecidr', 'kubernetes');
    expect(cidr.spec.cidrs).toEqual(['10.96.0.0/12']);
    expect(cidr.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'True' });
  });

  it('gives 50 Services 50 different addresses in the range, each an IPAddress', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `bulk-${i}`);
    await kubectl.run(['apply', '-f', '-'], manifest(names)).then((r) => expect(r.code, r.stderr).toBe(0));
    const services = (await kubectl.json('get', 'services')).items.filter((s: any) => s.metadata.name.startsWith('bulk-'));
    const ips = services.map((s: any) => s.spec.clusterIP as string);
    expect(ips).toHaveLength(50);
    expect(new Set(ips).size).toBe(50);
    expect(ips.filter((ip: string) => !inRange(ip) || ip === '10.96.0.1')).toEqual([]);
    const addresses = (await kubectl.json('get', 'ipaddresses')).items;
    for (const ip of ips) {
      const address = addresses.find((a: any) => a.metadata.name === ip);
      expect(address?.spec.parentRef).toMatchObject({ resource: 'services', namespace: 'default' });
    }
    expect(await kubectl.ok('get', 'ipaddress', ips[0], '--no-headers')).toMatch(new RegExp(`^${ips[0].replaceAll('.', '\\.')}\\s+services/default/bulk-`));
  });

  it('honours a requested cluster IP and refuses it to the next Service', async () => {
    await kubectl.ok('create', 'service', 'clusterip', 'fixed', '--clusterip=10.96.0.10', '--tcp=80');
    expect(await kubectl.ok('get', 'service', 'fixed', '-o', 'jsonpath={.spec.clusterIPs}')).toBe('["10.96.0.10"]');
    expect(await kubectl.fails('create', 'service', 'clusterip', 'clash', '--clusterip=10.96.0.10', '--tcp=80')).toBe(
      'error: failed to create ClusterIP service: Service "clash" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    );
    expect(await kubectl.fails('patch', 'service', 'fixed', '-p', '{"spec":{"clusterIP":"10.96.0.11"}}')).toBe(
      'The Service "fixed" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set',
    );
  });

  it('gives node ports in range, refuses taken ones, and frees them on delete and on a change to ClusterIP', async () => {
    const auto = await kubectl.json('create', 'service', 'nodeport', 'np-auto', '--tcp=80');
    expect(auto.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
    expect(auto.spec.ports[0].nodePort).toBeLessThanOrEqual(32767);
    await kubectl.ok('create', 'service', 'nodeport', 'np', '--tcp=80', '--node-port=30080');
    expect(await kubectl.fails('create', 'service', 'nodeport', 'np-clash', '--tcp=80', '--node-port=30080')).toBe(
      'error: failed to create NodePort service: Service "np-clash" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
    );
    expect(await kubectl.fails('create', 'service', 'nodeport', 'np-out', '--tcp=80', '--node-port=40000')).toBe(
      'error: failed to create NodePort service: Service "np-out" is invalid: spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767',
    );

    await kubectl.ok('delete', 'service', 'np');
    await kubectl.ok('create', 'service', 'nodeport', 'np-second', '--tcp=80', '--node-port=30080');
    await kubectl.ok('patch', 'service', 'np-second', '-p', '{"spec":{"type":"ClusterIP"}}');
    expect(await kubectl.ok('get', 'service', 'np-second', '-o', 'jsonpath={.spec.type} {.spec.ports[0].nodePort}')).toBe('ClusterIP ');
    await kubectl.ok('create', 'service', 'nodeport', 'np-third', '--tcp=80', '--node-port=30080');
  });

  it('gives headless and ExternalName Services no address', async () => {
    await kubectl.ok('create', 'service', 'clusterip', 'headless', '--clusterip=None');
    expect(await kubectl.ok('get', 'service', 'headless', '-o', 'jsonpath={.spec.clusterIP}')).toBe('None');
    await kubectl.ok('create', 'service', 'externalname', 'ext', '--external-name=example.com');
    const external = await kubectl.json('get', 'service', 'ext');
    expect(external.spec.clusterIP).toBeUndefined();
    expect(await kubectl.ok('get', 'service', 'ext', '--no-headers')).toMatch(/^ext\s+ExternalName\s+<none>\s+example\.com\s+/);
  });

  it("gives a LoadBalancer Service the nodes' InternalIPs", async () => {
    await kubectl.ok('create', 'service', 'loadbalancer', 'lb', '--tcp=80');
    const nodes = (await kubectl.json('get', 'nodes')).items;
    const internal = nodes.flatMap((n: any) => n.status.addresses.filter((a: any) => a.type === 'InternalIP').map((a: any) => a.address));
    const ingress = await waitFor(
      'the LoadBalancer ingress',
      async () => (await kubectl.json('get', 'service', 'lb')).status?.loadBalancer?.ingress,
      CLUSTER_TIMEOUT,
    );
    expect(ingress.map((i: any) => i.ip).sort()).toEqual([...new Set(internal)].sort());
    expect(await kubectl.ok('get', 'service', 'lb', '-o', 'jsonpath={.spec.ports[0].nodePort}')).toMatch(/^3\d{4}$/);
  });

  it('keeps every allocation across a restart on the same data dir and never hands a held one out again', async () => {
    const before = (await kubectl.json('get', 'services')).items;
    const ipsBefore = new Map(before.map((s: any) => [s.metadata.name, s.spec.clusterIP]));
    expect(await skiff.stop()).toBe(0);

    await start();
    const after = (await kubectl.json('get', 'services')).items;
    expect(new Map(after.map((s: any) => [s.metadata.name, s.spec.clusterIP]))).toEqual(ipsBefore);
    const addresses = new Set((await kubectl.json('get', 'ipaddresses')).items.map((a: any) => a.metadata.name));
    for (const ip of ipsBefore.values()) if (ip !== 'None' && ip) expect(addresses.has(ip)).toBe(true);

    await kubectl.run(['apply', '-f', '-'], manifest(Array.from({ length: 20 }, (_, i) => `later-${i}`))).then((r) => expect(r.code, r.stderr).toBe(0));
    const later = (await kubectl.json('get', 'services')).items.filter((s: any) => s.metadata.name.startsWith('later-'));
    const held = new Set(ipsBefore.values());
    expect(later.filter((s: any) => held.has(s.spec.clusterIP))).toEqual([]);
    expect(await kubectl.fails('create', 'service', 'nodeport', 'np-again', '--tcp=80', '--node-port=30080')).toContain('provided port is already allocated');
    expect(await kubectl.fails('create', 'service', 'clusterip', 'fixed-again', '--clusterip=10.96.0.10', '--tcp=80')).toContain(
      'provided IP is already allocated',
    );
  });
});
