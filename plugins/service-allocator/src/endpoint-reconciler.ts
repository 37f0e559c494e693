import { createHash } from 'node:crypto';
import { isApiError, RESOURCES, type Lease } from '@skiff/api';
import { SharedInformer } from '@skiff/client';
import type { ApiClient, Logger } from '@skiff/kernel';
import { canonicalIP, familyOf, ipToBigInt, type IPFamily } from './cidr.js';
import { readKubernetesEndpoints, writeKubernetesEndpoints } from './kubernetes-service.js';
import {
  ANNOTATION_ADVERTISE_ADDRESS,
  ANNOTATION_ADVERTISE_PORT,
  APISERVER_IDENTITY,
  ENDPOINT_LEASE_NAMESPACE,
  ENDPOINT_RECONCILER_LEASE,
  LABEL_APISERVER_IDENTITY,
  LABEL_ENDPOINT_RECONCILER,
} from './names.js';

export interface LeaseEndpointReconcilerOptions {
  /** Writes as the API server (it creates Leases in kube-system and the kubernetes Endpoints). */
  client: ApiClient;
  /** This API server's advertised address and port: what its lease holds. */
  address: string;
  port: number;
  leaseDurationSeconds: number;
  renewIntervalSeconds: number;
  /** A lease expired for longer than this is deleted by whichever API server sees it. */
  expiredLeaseGraceSeconds: number;
  logger: Logger;
}

const LEASE_SELECTOR = `${LABEL_ENDPOINT_RECONCILER}=${ENDPOINT_RECONCILER_LEASE}`;
/** A write that lost a race with another API server's is redone at once, up to this many times a pass. */
const MAX_ATTEMPTS = 5;
/** Wake-ups for an expiry come this much after it, so the lease is expired by the time it is read. */
const EXPIRY_SLACK_MS = 20;

/** `apiserver-` and a short hash of `address:port`: the same name for the same server across restarts. */
export function endpointLeaseName(address: string, port: number): string {
  return `apiserver-${createHash('sha256').update(`${address}:${port}`).digest('hex').slice(0, 16)}`;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** When a lease stops counting, in ms since the epoch; a lease never renewed has long expired. */
function expiresAt(lease: Lease): number {
  const renewed = Date.parse(lease.spec?.renewTime ?? lease.spec?.acquireTime ?? '');
  return Number.isNaN(renewed) ? 0 : renewed + (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
}

function leaseAddress(lease: Lease): string | undefined {
  return canonicalIP(lease.metadata.annotations?.[ANNOTATION_ADVERTISE_ADDRESS] ?? '');
}

/** IPv4 before IPv6, each in numeric order (10.0.0.9 before 10.0.0.10). */
function compareAddresses(a: string, b: string): number {
  const family = (familyOf(a) === 'IPv4' ? 0 : 1) - (familyOf(b) === 'IPv4' ? 0 : 1);
  if (family !== 0) return family;
  const [x, y] = [ipToBigInt(a), ipToBigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The lease endpoint reconciler: this API server holds a Lease of its own in kube-system naming its
 * address and port, renewed every `renewIntervalSeconds`, and writes the Endpoints and EndpointSlice of
 * `default/kubernetes` to the addresses of every unexpired endpoint lease, on each renewal, whenever such a
 * lease is added, removed, revived or changes its address, and when one expires.
 */
export class LeaseEndpointReconciler {
  readonly leaseName: string;
  private readonly family: IPFamily;
  private readonly watch = new AbortController();
  private lease: Lease | undefined;
  private renewTimer?: NodeJS.Timeout;
  private wakeTimer?: NodeJS.Timeout;
  private renewing?: Promise<void>;
  private pass?: Promise<void>;
  private watching?: Promise<void>;
  private again = false;
  private halted = false;

  constructor(private readonly options: LeaseEndpointReconcilerOptions) {
    this.leaseName = endpointLeaseName(options.address, options.port);
    this.family = familyOf(options.address) ?? 'IPv4';
  }

  /** Takes this server's lease and writes the endpoints (a failure fails the start), then keeps both current. */
  async start(): Promise<void> {
    await this.renew();
    await this.reconcile();
    const { client, logger } = this.options;
    const informer = new SharedInformer<Lease>(
      client,
      RESOURCES.leases,
      { namespace: ENDPOINT_LEASE_NAMESPACE, labelSelector: LEASE_SELECTOR },
      { resyncMs: 0, logger, retry: { initialMs: 200, maxMs: 5_000 } },
    );
    informer.addHandlers({
      add: () => this.kick(),
      delete: () => this.kick(),
      // A renewal of a lease that was live changes nothing; the renewal timers look at the set anyway.
      update: (old, current) => {
        if (expiresAt(old) <= Date.now() || leaseAddress(old) !== leaseAddress(current)) this.kick();
      },
    });
    this.watching = informer.run(this.watch.signal);
    this.scheduleRenewal();
  }

  /**
   * Stops renewing and watching and leaves the lease as it is, as a server that died would: the others
   * drop this address once the lease expires.
   */
  async halt(): Promise<void> {
    this.halted = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.wakeTimer);
    this.watch.abort();
    await Promise.all([this.renewing, this.pass, this.watching]);
  }

  /** A graceful stop: deletes this server's lease and writes the endpoints without its address at once. */
  async stop(): Promise<void> {
    await this.halt();
    try {
      await this.options.client.delete(RESOURCES.leases, this.leaseName, ENDPOINT_LEASE_NAMESPACE);
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
    await this.reconcile();
  }

  private scheduleRenewal(): void {
    this.renewTimer = setTimeout(() => {
      this.renewing = this.renew()
        .catch((err: unknown) => this.options.logger.warn({ err, lease: this.leaseName }, 'renewing the endpoint lease failed'))
        .then(() => {
          this.kick();
          if (!this.halted) this.scheduleRenewal();
        });
    }, this.options.renewIntervalSeconds * 1000);
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    const { client } = this.options;
    const now = microTime(Date.now());
    if (this.lease) {
      try {
        this.lease = await client.update<Lease>(RESOURCES.leases, this.renewed(this.lease, now));
        return;
      } catch (err) {
        // Deleted (an API server that took it for expired) or written by someone else: start over.
        this.lease = undefined;
        if (!isApiError(err, 'NotFound') && !isApiError(err, 'Conflict')) throw err;
      }
    }
    const fresh: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.leaseName, namespace: ENDPOINT_LEASE_NAMESPACE },
      spec: { acquireTime: now },
    };
    try {
      this.lease = await client.create<Lease>(RESOURCES.leases, this.renewed(fresh, now), ENDPOINT_LEASE_NAMESPACE);
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      const stored = await client.get<Lease>(RESOURCES.leases, this.leaseName, ENDPOINT_LEASE_NAMESPACE);
      this.lease = await client.update<Lease>(RESOURCES.leases, this.renewed(stored, now));
    }
  }

  private renewed(lease: Lease, now: string): Lease {
    const { address, port, leaseDurationSeconds } = this.options;
    return {
      ...{},
      ...lease,
      metadata: {
        ...{},
        ...lease.metadata,
        labels: { ...{}, ...lease.metadata.labels, [LABEL_APISERVER_IDENTITY]: APISERVER_IDENTITY, [LABEL_ENDPOINT_RECONCILER]: ENDPOINT_RECONCILER_LEASE },
        annotations: { ...{}, ...lease.metadata.annotations, [ANNOTATION_ADVERTISE_ADDRESS]: address, [ANNOTATION_ADVERTISE_PORT]: String(port) },
      },
      spec: { ...{}, ...lease.spec, holderIdentity: this.leaseName, leaseDurationSeconds, renewTime: now },
    };
  }

  /** One pass at a time; what asks for one meanwhile gets one more after it. */
  private kick(): void {
    if (this.halted) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.passes().finally(() => (this.pass = undefined));
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.reconcile();
      } catch (err) {
        this.options.logger.warn({ err }, 'reconciling the kubernetes endpoints failed');
      }
    } while (this.again && !this.halted);
  }

  private async reconcile(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.reconcileOnce();
      } catch (err) {
        const lostRace = isApiError(err, 'Conflict') || isApiError(err, 'AlreadyExists');
        if (!lostRace || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * The endpoints are read before the leases: a server that deletes its lease and then writes the
   * endpoints without its address either comes before the lease list here, or its write makes ours a
   * Conflict. So a stale list never puts back an address that left.
   */
  private async reconcileOnce(): Promise<void> {
    const { client, port, expiredLeaseGraceSeconds } = this.options;
    const stored = await readKubernetesEndpoints(client);
    const { items } = await client.list<Lease>(RESOURCES.leases, ENDPOINT_LEASE_NAMESPACE, { labelSelector: LEASE_SELECTOR });
    const now = Date.now();
    const live = new Set<string>();
    let wake = Infinity;
    for (const lease of items) {
      const expiry = expiresAt(lease);
      const forgetAt = expiry + expiredLeaseGraceSeconds * 1000;
      if (expiry > now) {
        const address = leaseAddress(lease);
        if (address) live.add(address);
        wake = Math.min(wake, expiry);
      } else if (forgetAt <= now) {
        await this.deleteExpired(lease);
      } else {
        wake = Math.min(wake, forgetAt);
      }
    }
    await writeKubernetesEndpoints(client, stored, [...live].sort(compareAddresses), port, this.family);
    this.wakeAt(wake);
  }

  /** Deletes a lease expired past the grace, unless it was renewed since it was read. */
  private async deleteExpired(lease: Lease): Promise<void> {
    try {
      await this.options.client.delete(RESOURCES.leases, lease.metadata.name!, ENDPOINT_LEASE_NAMESPACE, {
        preconditions: { resourceVersion: lease.metadata.resourceVersion },
      });
      this.options.logger.info({ lease: lease.metadata.name, address: leaseAddress(lease) }, 'deleted an expired endpoint lease');
    } catch (err) {
      if (!isApiError(err, 'NotFound') && !isApiError(err, 'Conflict')) throw err;
    }
  }

  private wakeAt(ms: number): void {
    clearTimeout(this.wakeTimer);
    if (this.halted || !Number.isFinite(ms)) return;
    this.wakeTimer = setTimeout(() => this.kick(), Math.max(0, ms - Date.now()) + EXPIRY_SLACK_MS);
    this.wakeTimer.unref();
  }
}
