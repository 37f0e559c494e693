import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { RESOURCES, type CertificateSigningRequest } from '@skiff/api';
import { sleep } from '@skiff/client';
import type { ApiClient } from '@skiff/kernel';
import forge from 'node-forge';
import { KubeletError } from '../errors.js';

/** The signers a kubelet asks, as upstream names them. */
export const SIGNERS = Object.freeze({
  CLIENT: 'kubernetes.io/kube-apiserver-client-kubelet',
  SERVING: 'kubernetes.io/kubelet-serving',
});

export interface CertificateSubject {
  commonName: string;
  organizations: string[];
  dnsNames?: string[];
  ips?: string[];
}

/** A new RSA key (Node's native generator) and a PKCS#10 request for `subject`, both PEM. */
export function newKeyAndRequest(subject: CertificateSubject): { keyPem: string; csrPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.publicKeyFromPem(publicKey);
  csr.setSubject([...subject.organizations.map((value) => ({ name: 'organizationName', value })), { name: 'commonName', value: subject.commonName }]);
  const altNames = [...(subject.dnsNames ?? []).map((value) => ({ type: 2, value })), ...(subject.ips ?? []).map((ip) => ({ type: 7, ip }))];
  if (altNames.length) csr.setAttributes([{ name: 'extensionRequest', extensions: [{ name: 'subjectAltName', altNames }] }]);
  csr.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { keyPem: privateKey, csrPem: forge.pki.certificationRequestToPem(csr) };
}

export interface CertificateRequestOptions {
  signerName: string;
  usages: string[];
  csrPem: string;
  /** The object's name prefix (`node-csr-` for client certificates, `csr-` otherwise, as upstream). */
  namePrefix?: string;
  expirationSeconds?: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Told once, when the request has waited a few seconds without an answer (someone may need to approve it). */
  waiting?: (name: string) => void;
}

const POLL_MS = 250;
const WAITING_NOTICE_MS = 5_000;

/**
 * Sends a CertificateSigningRequest and waits for its certificate: the PEM the signer wrote to
 * `status.certificate`. A request denied or failed, or not signed in time, is a one-line error naming it.
 */
export async function requestCertificate(client: ApiClient, options: CertificateRequestOptions): Promise<string> {
  const name = `${options.namePrefix ?? 'csr-'}${randomBytes(5).toString('hex')}`;
  await client.create<CertificateSigningRequest>(RESOURCES.certificatesigningrequests, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: Buffer.from(options.csrPem).toString('base64'),
      signerName: options.signerName,
      usages: options.usages,
      ...(options.expirationSeconds ? { expirationSeconds: options.expirationSeconds } : {}),
    },
  });
  const started = Date.now();
  let told = false;
  for (;;) {
    options.signal?.throwIfAborted();
    const csr = await client.get<CertificateSigningRequest>(RESOURCES.certificatesigningrequests, name);
    const refused = csr.status?.conditions?.find((condition) => (condition.type === 'Denied' || condition.type === 'Failed') && condition.status !== 'False');
    if (refused)
      throw new KubeletError('SKIFF_ERR_KUBELET_CSR_REFUSED', {
        name,
        how: refused.type.toLowerCase(),
        reason: refused.reason ?? '',
        message: refused.message ?? '',
      });
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString();
    const waited = Date.now() - started;
    if (waited >= options.timeoutMs) throw new KubeletError('SKIFF_ERR_KUBELET_CSR_TIMEOUT', { name, seconds: Math.round(waited / 1000) });
    if (!told && waited >= WAITING_NOTICE_MS) {
      told = true;
      options.waiting?.(name);
    }
    await sleep(POLL_MS, options.signal ?? new AbortController().signal);
  }
}

/** Whether a certificate (PEM) is still valid for at least `marginMs`, and names every one of `ips`. */
export function certificateUsable(certPem: string, marginMs: number, ips: string[] = []): boolean {
  try {
    const certificate = new X509Certificate(certPem);
    return Date.parse(certificate.validTo) - Date.now() > marginMs && ips.every((ip) => certificate.checkIP(ip) !== undefined);
  } catch {
    return false;
  }
}

/**
 * A new client certificate for node `nodeName` (CN system:node:<name>, O system:nodes) from a
 * `kube-apiserver-client-kubelet` CSR: with bootstrap credentials at join, with the node's own when it rotates.
 */
export async function requestNodeClientCertificate(
  client: ApiClient,
  nodeName: string,
  options: Pick<CertificateRequestOptions, 'timeoutMs' | 'signal' | 'waiting'>,
): Promise<{ certPem: string; keyPem: string }> {
  const { keyPem, csrPem } = newKeyAndRequest({ commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] });
  const certPem = await requestCertificate(client, {
    signerName: SIGNERS.CLIENT,
    usages: ['digital signature', 'key encipherment', 'client auth'],
    csrPem,
    namePrefix: 'node-csr-',
    ...options,
  });
  return { certPem, keyPem };
}
