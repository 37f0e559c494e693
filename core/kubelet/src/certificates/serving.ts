import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '@skiff/kernel';
import type { ApiClient } from '@skiff/kernel';
import { certificateUsable, newKeyAndRequest, requestCertificate, SIGNERS } from './request.js';

/** A serving certificate that runs out sooner than this is asked for again at start. */
const RENEW_MARGIN_MS = 24 * 60 * 60_000;
const SERVING_WAIT_MS = 2 * 60_000;

export interface ServingCertificate {
  certPem: string;
  keyPem: string;
}

/**
 * The kubelet's serving certificate for its HTTPS API, signed by the cluster through a `kubernetes.io/kubelet-serving`
 * CertificateSigningRequest (CN system:node:<name>, O system:nodes, the node's name and InternalIP as SANs), kept in
 * `<node dir>/pki/` and reused while it is valid for a day more and still names the address.
 */
export async function servingCertificate(client: ApiClient, node: ServingNode, signal: AbortSignal): Promise<ServingCertificate> {
  const { certFile, keyFile } = servingFiles(node);
  if (existsSync(certFile) && existsSync(keyFile)) {
    const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    if (certificateUsable(certPem, RENEW_MARGIN_MS, [node.ip])) return { certPem, keyPem };
  }
  return newServingCertificate(client, node, signal);
}

export interface ServingNode {
  name: string;
  ip: string;
  dataDir: string;
}

function servingFiles(node: ServingNode): { dir: string; certFile: string; keyFile: string } {
  const dir = join(node.dataDir, 'pki');
  return { dir, certFile: join(dir, 'kubelet-server.crt'), keyFile: join(dir, 'kubelet-server.key') };
}

/** Asks the cluster for a new serving certificate and keeps it (also how it is rotated). */
export async function newServingCertificate(client: ApiClient, node: ServingNode, signal: AbortSignal): Promise<ServingCertificate> {
  const { dir, certFile, keyFile } = servingFiles(node);
  const { keyPem, csrPem } = newKeyAndRequest({
    commonName: `system:node:${node.name}`,
    organizations: ['system:nodes'],
    dnsNames: [node.name],
    ips: [node.ip],
  });
  const certPem = await requestCertificate(client, {
    signerName: SIGNERS.SERVING,
    usages: ['digital signature', 'key encipherment', 'server auth'],
    csrPem,
    timeoutMs: SERVING_WAIT_MS,
    signal,
  });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  writeFileAtomically(keyFile, keyPem, 0o600);
  writeFileAtomically(certFile, certPem, 0o644);
  return { certPem, keyPem };
}
