import { RESOURCES, type CertificateSigningRequest } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import type { SigningCa } from './ca.js';
import { hasFailed, isApproved, isIssued, trueCondition, withCondition } from './conditions.js';
import { CsrError } from './errors.js';
import { issueCertificate, validityPeriod } from './issue.js';
import { CONDITION, REASON, SIGNING_CONTROLLER } from './names.js';
import { parseCertificateRequest, type CertificateRequest } from './request.js';
import { isOwnSigner, signerProblem } from './rules.js';

export interface SignerSettings {
  /** The longest certificate issued (kube-controller-manager's --cluster-signing-duration), in seconds. */
  durationSeconds: number;
}

/** Approved, neither failed nor issued yet, and for one of the built-in signers. */
export function awaitsSigning(csr: CertificateSigningRequest): boolean {
  return isOwnSigner(csr.spec.signerName) && isApproved(csr) && !hasFailed(csr) && !isIssued(csr);
}

/**
 * kube-controller-manager's `csrsigning`: signs approved requests of the signers kube-apiserver-client,
 * kube-apiserver-client-kubelet and kubelet-serving with the cluster CA, writing the certificate into
 * `status.certificate`. A request that breaks its signer's rules gets a `Failed` condition instead.
 */
export class CsrSigner {
  private readonly queue = new WorkQueue<string>({ name: SIGNING_CONTROLLER });
  private readonly csrs: Informer<CertificateSigningRequest>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly ca: SigningCa,
    private readonly settings: SignerSettings,
  ) {
    this.csrs = ctx.informers.informer<CertificateSigningRequest>(RESOURCES.certificatesigningrequests);
    const enqueue = (csr: CertificateSigningRequest) => {
      if (awaitsSigning(csr)) this.queue.add(csr.metadata.name!);
    };
    this.csrs.addHandlers({ add: enqueue, update: (_old, csr) => enqueue(csr) });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.csrs], queue: this.queue, workers, sync: (name) => this.sync(name) });
  }

  /** Signs one request, or marks it Failed. The status write is conditional, so a request is never signed twice. */
  async sync(name: string): Promise<void> {
    const csr = this.csrs.get(name);
    if (!csr || !awaitsSigning(csr)) return;
    let request: CertificateRequest;
    try {
      request = parseCertificateRequest(csr.spec.request);
    } catch (err) {
      if (!(err instanceof CsrError)) throw err;
      return this.fail(csr, err.message);
    }
    const usages = csr.spec.usages ?? [];
    const problem = signerProblem(csr.spec.signerName!, request, usages);
    if (problem) return this.fail(csr, problem);
    const now = Date.now();
    const validity = validityPeriod(now, {
      expirationSeconds: csr.spec.expirationSeconds,
      durationSeconds: this.settings.durationSeconds,
      caNotAfter: this.ca.notAfter,
    });
    // Not the request's fault: retried (and logged) until someone renews the CA.
    if (validity.notAfter.getTime() <= now) throw new CsrError('SKIFF_ERR_CSR_NO_CA', { detail: `the CA expired on ${this.ca.notAfter.toISOString()}` });
    const pem = issueCertificate(this.ca, request, usages, validity);
    await this.ctx.client.updateStatus<CertificateSigningRequest>(RESOURCES.certificatesigningrequests, {
      ...{},
      ...csr,
      status: { ...{}, ...csr.status, certificate: Buffer.from(pem).toString('base64') },
    });
    this.ctx.logger.info({ csr: name, signer: csr.spec.signerName, notAfter: validity.notAfter.toISOString() }, 'certificate issued');
  }

  private async fail(csr: CertificateSigningRequest, message: string): Promise<void> {
    await this.ctx.client.updateStatus<CertificateSigningRequest>(
      RESOURCES.certificatesigningrequests,
      withCondition(csr, trueCondition(CONDITION.FAILED, REASON.SIGNER_VALIDATION_FAILURE, message)),
    );
    this.ctx.logger.info({ csr: csr.metadata.name, signer: csr.spec.signerName, reason: message }, 'certificate signing request refused');
  }
}
