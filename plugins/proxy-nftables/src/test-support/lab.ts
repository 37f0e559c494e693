import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';

// Network namespaces for the proxy's tests and benchmark: a "node" namespace where the rules are loaded, endpoint
// namespaces on a bridge in it (the pod subnet), and a client namespace routed through it. Everything made here
// is named with one random prefix and removed by `cleanup`, also after a failure.

export const isRoot = process.getuid?.() === 0;

export const POD_GATEWAY = '10.244.1.1';
export const NODE_IP = '192.168.77.1';
export const CLIENT_IP = '192.168.77.2';
export const TCP_PORT = 8080;
export const UDP_PORT = 5353;

const SERVER = `
const net = require('net'), dgram = require('dgram');
const [name, tcpPort, udpPort] = process.argv.slice(1);
const peer = (a) => a.replace(/^::ffff:/, '');
let pending = 2;
const up = () => { if (--pending === 0) console.log('ready'); };
net.createServer((s) => { s.on('error', () => {}); s.end(name + ' ' + peer(s.remoteAddress) + '\\n'); }).listen(Number(tcpPort), '0.0.0.0', up);
const udp = dgram.createSocket('udp4');
udp.on('message', (m, r) => udp.send(name + ' ' + r.address, r.port, r.address));
udp.bind(Number(udpPort), '0.0.0.0', up);
`;

const CLIENT = `
const net = require('net'), dgram = require('dgram');
const { protocol, host, port, count, timeoutMs, sourcePort } = JSON.parse(process.argv[1]);
function tcp() {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const s = net.connect({ host, port });
    let data = '';
    const done = (r) => { s.destroy(); clearTimeout(t); resolve({ ...r, ms: Number(process.hrtime.bigint() - started) / 1e6 }); };
    const t = setTimeout(() => done({ error: 'ETIMEDOUT' }), timeoutMs);
    s.on('data', (d) => (data += d));
    s.on('end', () => done({ answer: data.trim() }));
    s.on('error', (e) => done({ error: e.code }));
  });
}
function udp() {
  return new Promise((resolve) => {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    const done = (r) => { clearTimeout(t); s.close(); resolve(r); };
    const t = setTimeout(() => done({ error: 'ETIMEDOUT' }), timeoutMs);
    s.on('message', (m) => done({ answer: m.toString() }));
    s.on('error', (e) => done({ error: e.code }));
    s.bind(sourcePort || 0, () => s.send('hi', port, host));
  });
}
(async () => {
  const results = [];
  for (let i = 0; i < count; i++) results.push(await (protocol === 'udp' ? udp() : tcp()));
  console.log(JSON.stringify(results));
})();
`;

export interface Answer {
  answer?: string;
  error?: string;
  ms?: number;
}

export class Lab {
  readonly prefix = `skp${randomBytes(3).toString('hex')}`;
  private readonly namespaces: string[] = [];
  private readonly processes: ChildProcess[] = [];
  private endpoints = 0;

  /** The node namespace (where the proxy's rules go), with the pod bridge and a default route that leads nowhere. */
  readonly node = `${this.prefix}-node`;
  readonly client = `${this.prefix}-client`;

  run(args: readonly string[], input?: string): string {
    return execFileSync(args[0]!, args.slice(1), { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  }

  in(namespace: string, args: readonly string[], input?: string): string {
    return this.run(['ip', 'netns', 'exec', namespace, ...args], input);
  }

  private addNamespace(name: string): void {
    this.run(['ip', 'netns', 'add', name]);
    this.namespaces.push(name);
    this.in(name, ['ip', 'link', 'set', 'lo', 'up']);
  }

  /** Node and client namespaces: client 192.168.77.2 routed through node 192.168.77.1; the pod bridge 10.244.1.1/24. */
  setUp(): void {
    this.addNamespace(this.node);
    this.addNamespace(this.client);
    const n = (...args: string[]) => this.in(this.node, args);
    n('ip', 'link', 'add', 'br0', 'type', 'bridge');
    n('ip', 'addr', 'add', `${POD_GATEWAY}/24`, 'dev', 'br0');
    n('ip', 'link', 'set', 'br0', 'up');
    n('ip', 'link', 'add', 'vc', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.client);
    n('ip', 'addr', 'add', `${NODE_IP}/24`, 'dev', 'vc');
    n('ip', 'link', 'set', 'vc', 'up');
    // A real node has a default route: traffic nobody catches would leave through it (here: to a gateway nobody answers for).
    n('ip', 'link', 'add', 'up0', 'type', 'veth', 'peer', 'name', 'up1');
    n('ip', 'addr', 'add', '192.168.99.1/24', 'dev', 'up0');
    n('ip', 'link', 'set', 'up0', 'up');
    n('ip', 'link', 'set', 'up1', 'up');
    n('ip', 'route', 'add', 'default', 'via', '192.168.99.2');
    const c = (...args: string[]) => this.in(this.client, args);
    c('ip', 'addr', 'add', `${CLIENT_IP}/24`, 'dev', 'eth0');
    c('ip', 'link', 'set', 'eth0', 'up');
    c('ip', 'route', 'add', 'default', 'via', NODE_IP);
  }

  /** An endpoint namespace on the bridge, 10.244.1.<10 + n>, with a server answering "<name> <peer address>". */
  async addEndpoint(name: string): Promise<string> {
    const index = ++this.endpoints;
    const namespace = `${this.prefix}-e${index}`;
    const ip = `10.244.1.${10 + index}`;
    this.addNamespace(namespace);
    const port = `ve${index}`;
    this.in(this.node, ['ip', 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace]);
    this.in(this.node, ['ip', 'link', 'set', port, 'master', 'br0', 'up']);
    // As the CNI bridge plugin does: a pod reaching itself through a Service gets its packets back on its own port.
    this.in(this.node, ['ip', 'link', 'set', port, 'type', 'bridge_slave', 'hairpin', 'on']);
    this.in(namespace, ['ip', 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    this.in(namespace, ['ip', 'link', 'set', 'eth0', 'up']);
    this.in(namespace, ['ip', 'route', 'add', 'default', 'via', POD_GATEWAY]);
    await this.serve(namespace, name);
    return ip;
  }

  endpointNamespace(ip: string): string {
    return `${this.prefix}-e${Number(ip.split('.')[3]) - 10}`;
  }

  private serve(namespace: string, name: string): Promise<void> {
    const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', SERVER, name, String(TCP_PORT), String(UDP_PORT)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.processes.push(child);
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`server ${name} exited with ${code}`)));
      child.stdout!.once('data', () => resolve());
    });
  }

  /** `count` requests, one after another, from a namespace (the client by default). */
  async request(
    target: { protocol?: 'tcp' | 'udp'; host: string; port: number; count?: number; timeoutMs?: number; sourcePort?: number },
    from = this.client,
  ): Promise<Answer[]> {
    const args = { protocol: 'tcp', count: 1, timeoutMs: 2000, ...target };
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('ip', ['netns', 'exec', from, process.execPath, '-e', CLIENT, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.once('error', reject);
      child.once('close', () => resolve(out));
    });
    return JSON.parse(output) as Answer[];
  }

  async cleanup(): Promise<void> {
    for (const child of this.processes) child.kill('SIGKILL');
    await Promise.all(
      this.processes.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined)),
    );
    for (const namespace of this.namespaces.reverse()) {
      try {
        this.run(['ip', 'netns', 'delete', namespace]);
      } catch {
        // already gone
      }
    }
  }
}
