import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueClientCertificate, writeCertificateFiles, type ClusterCa } from '@skiff/apiserver';

/** The admin's identity in its certificate, as kubeadm's admin.conf has it. */
export const ADMIN_USER = 'kubernetes-admin';
export const ADMIN_GROUP = 'system:masters';
/** An admin certificate that expires sooner than this is issued again at start. */
const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

export interface AdminCertificate {
  certPem: string;
  keyPem: string;
  /** true when it was issued by this call, false when the files were reused. */
  issued: boolean;
}

/**
 * The admin's client certificate, in `<pkiDir>/admin.crt` and `admin.key` (0600): reused while it is signed by
 * this CA, names the admin and has 30 days left; issued anew (for a year) otherwise.
 */
export function ensureAdminCertificate(pkiDir: string, ca: Pick<ClusterCa, 'caPem' | 'caKeyPem'>): AdminCertificate {
  const certFile = join(pkiDir, 'admin.crt');
  const keyFile = join(pkiDir, 'admin.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    const certPem = readFileSync(certFile, 'utf8');
    if (stillGood(certPem, ca.caPem)) return { certPem, keyPem: readFileSync(keyFile, 'utf8'), issued: false };
  }
  const fresh = issueClientCertificate(ca, { user: ADMIN_USER, groups: [ADMIN_GROUP] });
  writeCertificateFiles(certFile, keyFile, fresh);
  return { certPem: fresh.certPem, keyPem: fresh.keyPem, issued: true };
}

function stillGood(certPem: string, caPem: string): boolean {
  try {
    const certificate = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    const subject = certificate.toLegacyObject().subject as Record<string, string | string[] | undefined>;
    return (
      certificate.checkIssued(ca) &&
      certificate.verify(ca.publicKey) &&
      subject.CN === ADMIN_USER &&
      subject.O === ADMIN_GROUP &&
      Date.parse(certificate.validTo) - Date.now() > RENEW_BEFORE_MS
    );
  } catch {
    return false;
  }
}
