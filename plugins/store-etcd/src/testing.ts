/**
 * Real etcd for tests: an `EtcdCluster` of Debian's etcd processes on loopback ports (`@skiff/plugin-store-etcd/testing`),
 * for this package's tests, the integration tests and a store plugin author's own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's etcd-server (scripts/install-system-deps.sh installs it). */
export const ETCD_BINARY = process.env.SKIFF_ETCD_BINARY ?? '/usr/bin/etcd';

export function etcdAvailable(): boolean {
  return existsSync(ETCD_BINARY);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Member {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  process?: ChildProcess;
  log: string[];
}

/**
 * A real etcd cluster of `size` members on loopback ports, each its own process with its own data folder; members
 * can be killed with SIGKILL and started again (same data) to test what survives.
 */
export class EtcdCluster {
  private readonly members: Member[] = [];
  private readonly root: string;

  private constructor(size: number, ports: number[]) {
    this.root = mkdtempSync(join(tmpdir(), 'skiff-etcd-'));
    for (let i = 0; i < size; i++)
      this.members.push({ name: `m${i}`, clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]!, dataDir: join(this.root, `m${i}`), log: [] });
  }

  static async start(size = 1): Promise<EtcdCluster> {
    const ports: number[] = [];
    while (ports.length < size * 2) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const cluster = new EtcdCluster(size, ports);
    try {
      for (let i = 0; i < size; i++) cluster.run(i, 'new');
      await Promise.all(cluster.members.map((_, i) => cluster.waitHealthy(i)));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  get endpoints(): string[] {
    return this.members.map((member) => `http://127.0.0.1:${member.clientPort}`);
  }

  endpoint(index: number): string {
    return this.endpoints[index]!;
  }

  /** The index of the member that leads the Raft group now (asked over etcd's JSON gateway). */
  async leader(): Promise<number> {
    for (const [index, member] of this.members.entries()) {
      if (!member.process) continue;
      try {
        const answer = await fetch(`http://127.0.0.1:${member.clientPort}/v3/maintenance/status`, {
          method: 'POST',
          body: '{}',
          signal: AbortSignal.timeout(2000),
        });
        const status = (await answer.json()) as { header?: { member_id?: string }; leader?: string };
        if (status.leader && status.header?.member_id === status.leader) return index;
      } catch {
        // down or busy: ask the next
      }
    }
    throw new Error('no etcd member says it leads');
  }

  /** SIGKILL, as a machine that dies: no chance to flush or leave the cluster. */
  async kill(index: number): Promise<void> {
    const member = this.members[index]!;
    const child = member.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    member.process = undefined;
  }

  /** Starts a killed member again on its data. */
  async restart(index: number): Promise<void> {
    this.run(index, 'existing');
    await this.waitHealthy(index);
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((_, i) => this.kill(i)));
    rmSync(this.root, { recursive: true, force: true });
  }

  private run(index: number, state: 'new' | 'existing'): void {
    const member = this.members[index]!;
    const initialCluster = this.members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
    const child = spawn(
      ETCD_BINARY,
      [
        `--name=${member.name}`,
        `--data-dir=${member.dataDir}`,
        `--listen-client-urls=http://127.0.0.1:${member.clientPort}`,
        `--advertise-client-urls=http://127.0.0.1:${member.clientPort}`,
        `--listen-peer-urls=http://127.0.0.1:${member.peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${member.peerPort}`,
        `--initial-cluster=${initialCluster}`,
        `--initial-cluster-state=${state}`,
        '--initial-cluster-token=skiff-test',
        '--log-level=error',
        '--logger=zap',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      member.log.push(chunk.toString());
      if (member.log.length > 50) member.log.shift();
    });
    member.process = child;
  }

  private async waitHealthy(index: number, timeoutMs = 30_000): Promise<void> {
    const member = this.members[index]!;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const answer = await fetch(`http://127.0.0.1:${member.clientPort}/health`, { signal: AbortSignal.timeout(2000) });
        const body = (await answer.json()) as { health?: string };
        if (body.health === 'true') return;
      } catch {
        // not listening yet
      }
      if (member.process?.exitCode !== null && member.process?.exitCode !== undefined)
        throw new Error(`etcd member ${member.name} exited with ${member.process.exitCode}: ${member.log.join('').slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`etcd member ${member.name} not healthy after ${timeoutMs} ms: ${member.log.join('').slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
