import { RESOURCES, type Lease } from '@skiff/api';
import type { Logger } from '@skiff/kernel';
import { FreezableRelay, startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, HttpsTransport, LeaderElector } from '@skiff/client';

// Short, but with room for a busy test machine: the leader must renew within 1.2 s, others wait 2 s.
const TIMING = { leaseDurationMs: 2000, renewDeadlineMs: 1200, retryPeriodMs: 300 };
const NAMESPACE = 'kube-system';

let cluster: ControlPlane;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  cluster = await startControlPlane([], { enabled: [], config: { logLevel: 'silent' } });
});
afterAll(async () => {
  await cluster?.stop();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A client over the API server's real HTTPS listener (or a relay in front of it), as the cluster's admin. */
function httpsClient(server?: string) {
  const info = cluster.kernel.resolve('apiServerInfo');
  const token = cluster.kernel.resolve('apiHandler').issueLoopbackToken({ username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
  const client = createClient(new HttpsTransport({ server: server ?? info.url, caPem: info.caPem, token }));
  cleanups.push(() => client.close());
  return client;
}

function recordingLogger(lines: string[]): Logger {
  const record = (obj: object | string, msg?: string) => void lines.push(msg ?? String(obj));
  const logger: Logger = { debug: record, info: record, warn: record, error: record, child: () => logger };
  return logger;
}

/** Every candidate's view, and a check that two never lead at once. */
class Election {
  readonly leading = new Set<string>();
  overlaps = 0;
  readonly electors: LeaderElector[] = [];
  /** What the candidates logged, by message. */
  readonly logged: string[] = [];

  constructor(readonly lease: string) {}

  candidate(name: string, client = httpsClient()): LeaderElector {
    const elector = new LeaderElector({
      client,
      lease: { name: this.lease, namespace: NAMESPACE },
      identity: name,
      ...TIMING,
      logger: recordingLogger(this.logged),
      callbacks: {
        startedLeading: () => {
          if (this.leading.size > 0) this.overlaps++;
          this.leading.add(name);
        },
        stoppedLeading: () => void this.leading.delete(name),
      },
    });
    this.electors.push(elector);
    cleanups.push(() => elector.stop());
    return elector;
  }

  async leader(other?: string): Promise<string> {
    return waitFor(
      `a leader of ${this.lease}${other ? ` other than ${other}` : ''}`,
      () => {
        const [leader] = this.leading;
        return leader !== undefined && leader !== other ? leader : undefined;
      },
      { timeoutMs: 3 * TIMING.leaseDurationMs + 2 * TIMING.retryPeriodMs },
    );
  }

  read(): Promise<Lease> {
    return cluster.client.get<Lease>(RESOURCES.leases, this.lease, NAMESPACE);
  }
}

describe('LeaderElector', () => {
  it('lets exactly one of two candidates lead, writing the Lease as upstream does', async () => {
    const election = new Election('one-leader');
    const a = election.candidate('a');
    const b = election.candidate('b');
    a.start();
    b.start();
    const leader = await election.leader();
    // Several renewals later the same candidate still leads, and it alone.
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMING.retryPeriodMs));
    expect([...election.leading]).toEqual([leader]);
    expect(election.overlaps).toBe(0);
    expect([a, b].filter((elector) => elector.isLeader).map((elector) => elector.identity)).toEqual([leader]);
    const lease = await election.read();
    expect(lease.spec).toMatchObject({ holderIdentity: leader, leaseDurationSeconds: 2, leaseTransitions: 0 });
    expect(lease.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(Date.parse(lease.spec!.renewTime!)).toBeGreaterThan(Date.parse(lease.spec!.acquireTime!));
    expect(a.leader).toBe(leader);
    expect(b.leader).toBe(leader);
  });

  it('names the candidate <hostname>_<uuid> by default and refuses timings that cannot work', () => {
    const elector = new LeaderElector({
      client: cluster.client,
      lease: { name: 'x', namespace: NAMESPACE },
      callbacks: { startedLeading() {}, stoppedLeading() {} },
    });
    expect(elector.identity).toMatch(/^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(
      () =>
        new LeaderElector({
          client: cluster.client,
          lease: { name: 'x', namespace: NAMESPACE },
          leaseDurationMs: 1000,
          renewDeadlineMs: 1000,
          callbacks: { startedLeading() {}, stoppedLeading() {} },
        }),
    ).toThrow('leader election needs leaseDuration > renewDeadline > 1.2 × retryPeriod > 0 (got 1000 ms, 1000 ms, 2000 ms)');
  });

  it('stops the leader at once when it cannot renew, and hands the lease over only after it expired', async () => {
    const election = new Election('frozen-leader');
    const relay = await new FreezableRelay(new URL(cluster.kernel.resolve('apiServerInfo').url)).start();
    cleanups.push(() => relay.close());
    const a = election.candidate('a', httpsClient(relay.url));
    a.start();
    expect(await election.leader()).toBe('a');
    const b = election.candidate('b');
    b.start();
    await waitFor('b to see a leading', () => b.leader === 'a');
    // a's requests now hang: it must give up leading by itself within renewDeadline, before b can take over.
    relay.frozen = true;
    const lastRenewal = Date.parse((await election.read()).spec!.renewTime!);
    await waitFor('a to stop leading', () => !a.isLeader, { timeoutMs: TIMING.retryPeriodMs + TIMING.renewDeadlineMs + 2000 });
    expect(election.leading.has('a')).toBe(false);
    expect(await election.leader('a')).toBe('b');
    const takenOver = await election.read();
    expect(takenOver.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    // b waited the whole lease duration, by its own clock, from a's last renewal it saw.
    expect(Date.parse(takenOver.spec!.acquireTime!) - lastRenewal).toBeGreaterThanOrEqual(TIMING.leaseDurationMs);
    expect(election.overlaps).toBe(0);
    // a campaigns again; once its connection works it sees b lead and waits.
    relay.thaw();
    await waitFor('a to see b leading', () => a.leader === 'b');
    expect(a.isLeader).toBe(false);
  });

  it('releases the lease when the leader stops, so the other takes it at its next try', async () => {
    const election = new Election('released');
    const a = election.candidate('a');
    a.start();
    expect(await election.leader()).toBe('a');
    const b = election.candidate('b');
    b.start();
    await waitFor('b to see a leading', () => b.leader === 'a');
    // The released lease names nobody, and b takes it without waiting for a's lease duration.
    await a.stop();
    const released = Date.now();
    expect(a.isLeader).toBe(false);
    expect(election.leading.has('a')).toBe(false);
    expect(await election.leader()).toBe('b');
    const lease = await election.read();
    expect(lease.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(Date.parse(lease.spec!.acquireTime!) - released).toBeLessThan(TIMING.leaseDurationMs);
    expect(election.overlaps).toBe(0);
  });

  it('never has two leaders when candidates race for a free or an expired lease (409 Conflict)', async () => {
    let lostRaces = 0;
    for (let round = 0; round < 4; round++) {
      const name = `race-${round}`;
      if (round % 2 === 1) {
        // An expired lease of a holder that is gone: both candidates update it from the same resourceVersion.
        const past = new Date(Date.now() - 60_000).toISOString().replace(/Z$/, '000Z');
        await cluster.client.create<Lease>(RESOURCES.leases, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: NAMESPACE },
          spec: { holderIdentity: 'gone', leaseDurationSeconds: 1, acquireTime: past, renewTime: past, leaseTransitions: 3 },
        });
      }
      const election = new Election(name);
      const candidates = ['a', 'b', 'c'].map((id) => election.candidate(id));
      for (const candidate of candidates) candidate.start();
      const leader = await election.leader();
      await new Promise((resolve) => setTimeout(resolve, 2 * TIMING.retryPeriodMs));
      expect([...election.leading]).toEqual([leader]);
      expect(candidates.filter((candidate) => candidate.isLeader)).toHaveLength(1);
      expect(election.overlaps).toBe(0);
      expect((await election.read()).spec).toMatchObject({ holderIdentity: leader, leaseTransitions: round % 2 === 1 ? 4 : 0 });
      for (const candidate of candidates) await candidate.stop();
      lostRaces += election.logged.filter((line) => line.includes('first')).length;
    }
    // Candidates that start together read the same lease and write it from the same version: the losers got 409.
    expect(lostRaces).toBeGreaterThan(0);
  });
});
