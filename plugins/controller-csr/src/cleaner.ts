import { X509Certificate } from 'node:crypto';
import { isApiError, RESOURCES, type CertificateSigningRequest, type CertificateSigningRequestCondition } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { conditionOf, isIssued } from './conditions.js';
import { CLEANER_CONTROLLER, CONDITION } from './names.js';

export interface CleanerSettings {
  /** How long approved-and-issued, denied and failed requests are kept, from their condition's last update. */
  finishedRetentionMs: number;
  /** How long requests without any condition are kept, from their creation. */
  pendingRetentionMs: number;
}

/** A timer never waits longer than this: far-off deadlines (a year's certificate) are looked at again meanwhile. */
const LONGEST_WAIT_MS = 60 * 60 * 1000;

/** The expiry of the first certificate in `status.certificate` (base64 of PEM), if it can be read. */
function certificateExpiry(csr: CertificateSigningRequest): number | undefined {
  try {
    return Date.parse(new X509Certificate(Buffer.from(csr.status!.certificate!, 'base64')).validTo);
  } catch {
    return undefined;
  }
}

/**
 * When the cleaner deletes a request (epoch ms), as upstream's cleaner decides: an hour after it was approved
 * and issued, denied, or failed; a day after its creation while it has no condition at all; and once its
 * issued certificate has expired. Undefined when none applies (an approved request its signer has not
 * signed yet stays). A condition's time is its lastUpdateTime, else its lastTransitionTime, else the request's
 * creation.
 */
export function cleanupTime(csr: CertificateSigningRequest, settings: CleanerSettings): number | undefined {
  const created = Date.parse(csr.metadata.creationTimestamp ?? '');
  const since = (condition: CertificateSigningRequestCondition) => Date.parse(condition.lastUpdateTime ?? condition.lastTransitionTime ?? '') || created;
  const times: number[] = [];
  const approved = conditionOf(csr, CONDITION.APPROVED);
  if (approved && isIssued(csr)) times.push(since(approved) + settings.finishedRetentionMs);
  for (const type of [CONDITION.DENIED, CONDITION.FAILED]) {
    const condition = conditionOf(csr, type);
    if (condition) times.push(since(condition) + settings.finishedRetentionMs);
  }
  if (!csr.status?.conditions?.length) times.push(created + settings.pendingRetentionMs);
  if (isIssued(csr)) {
    const expiry = certificateExpiry(csr);
    if (expiry !== undefined) times.push(expiry);
  }
  const valid = times.filter((time) => !Number.isNaN(time));
  return valid.length ? Math.min(...valid) : undefined;
}

/**
 * kube-controller-manager's `csrcleaner`: deletes certificate signing requests once they are of no more use
 * (see `cleanupTime`), so automatic requests and approvals do not pile them up. Each request is looked at when
 * it changes and again when its time comes, instead of upstream's hourly sweep.
 */
export class CsrCleaner {
  private readonly queue = new WorkQueue<string>({ name: CLEANER_CONTROLLER });
  private readonly csrs: Informer<CertificateSigningRequest>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly settings: CleanerSettings,
  ) {
    this.csrs = ctx.informers.informer<CertificateSigningRequest>(RESOURCES.certificatesigningrequests);
    const schedule = (csr: CertificateSigningRequest) => this.schedule(csr);
    this.csrs.addHandlers({ add: schedule, update: (_old, csr) => schedule(csr) });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.csrs], queue: this.queue, workers, sync: (name) => this.sync(name) });
  }

  /** Deletes the request if its time has come (only the version that was judged), or looks at it again later. */
  async sync(name: string): Promise<void> {
    const csr = this.csrs.get(name);
    const wait = csr ? this.wait(csr) : undefined;
    if (!csr || wait === undefined) return;
    if (wait > 0) return this.queue.addAfter(name, Math.min(wait, LONGEST_WAIT_MS));
    try {
      await this.ctx.client.delete(RESOURCES.certificatesigningrequests, name, undefined, {
        preconditions: { uid: csr.metadata.uid, resourceVersion: csr.metadata.resourceVersion },
      });
    } catch (err) {
      if (isApiError(err, 'NotFound')) return;
      throw err;
    }
    this.ctx.logger.info({ csr: name }, 'certificate signing request cleaned up');
  }

  /** Queues the request for when it is due. */
  private schedule(csr: CertificateSigningRequest): void {
    const wait = this.wait(csr);
    if (wait !== undefined) this.queue.addAfter(csr.metadata.name!, Math.min(wait, LONGEST_WAIT_MS));
  }

  /** Milliseconds until the request is due (zero or less: now), or undefined when it never is as it stands. */
  private wait(csr: CertificateSigningRequest): number | undefined {
    const time = cleanupTime(csr, this.settings);
    return time === undefined ? undefined : time - Date.now();
  }
}
