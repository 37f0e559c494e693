import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import forge from 'node-forge';
import { errorMessage } from '@skiff/api';
import { readClusterCa } from '@skiff/apiserver';
import type { Kernel } from '@skiff/kernel';
import { fromDer, keyIdentifierOf, type Asn1 } from './der.js';
import { CsrError } from './errors.js';

const { asn1 } = forge;

/** How the CA's key signs: the algorithm's OID, the digest Node's `sign` takes (none for Ed25519), and whether the AlgorithmIdentifier carries a NULL. */
export interface SignatureAlgorithm {
  oid: string;
  digest: string | null;
  nullParameters: boolean;
}

/** The CA certificates are issued with, ready to sign. */
export interface SigningCa {
  certificate: X509Certificate;
  key: KeyObject;
  /** The CA's subject Name, as its certificate encodes it: the issuer of every certificate it signs. */
  subject: Asn1;
  notAfter: Date;
  /** SHA-1 of the CA's public key bits, which issued certificates name as their authority key identifier. */
  keyIdentifier: Buffer;
  signatureAlgorithm: SignatureAlgorithm;
}

const SIGNATURE_ALGORITHMS: Readonly<Record<string, SignatureAlgorithm>> = Object.freeze({
  rsa: { oid: '1.2.840.113549.1.1.11', digest: 'sha256', nullParameters: true }, // sha256WithRSAEncryption
  ec: { oid: '1.2.840.10045.4.3.2', digest: 'sha256', nullParameters: false }, // ecdsa-with-SHA256
  ed25519: { oid: '1.3.101.112', digest: null, nullParameters: false },
});

const noCa = (detail: string, cause?: unknown) => new CsrError('SKIFF_ERR_CSR_NO_CA', { detail }, cause === undefined ? undefined : { cause });

/** The subject Name and SubjectPublicKeyInfo of a certificate, as it encodes them. */
function subjectAndKey(certificate: X509Certificate): { subject: Asn1; publicKeyInfo: Asn1 } {
  const tbs = (fromDer(certificate.raw.toString('binary'), { decodeBitStrings: false }).value as Asn1[])[0]!;
  const fields = tbs.value as Asn1[];
  // version [0] is optional; then serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo.
  const first = fields[0]?.tagClass === asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
  return { subject: fields[first + 4]!, publicKeyInfo: fields[first + 5]! };
}

/** The CA from PEM text: its certificate (the first in the text) and the key that belongs to it. */
export function signingCaFromPem(certificatePem: string, keyPem: string): SigningCa {
  let certificate: X509Certificate;
  let key: KeyObject;
  try {
    certificate = new X509Certificate(certificatePem);
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw noCa(`cannot read the CA certificate or key (${errorMessage(err)})`, err);
  }
  if (!certificate.ca) throw noCa(`the certificate of ${certificate.subject.replace(/\n/g, ', ')} is not a CA certificate`);
  if (!certificate.checkPrivateKey(key)) throw noCa('the CA key does not belong to the CA certificate');
  const signatureAlgorithm = SIGNATURE_ALGORITHMS[key.asymmetricKeyType ?? ''];
  if (!signatureAlgorithm) throw noCa(`a CA key of type ${key.asymmetricKeyType} cannot sign here (RSA, EC or Ed25519 can)`);
  const { subject, publicKeyInfo } = subjectAndKey(certificate);
  return { certificate, key, subject, notAfter: new Date(certificate.validTo), keyIdentifier: keyIdentifierOf(publicKeyInfo), signatureAlgorithm };
}

/**
 * The CA the signer uses. Its files: `caFile` / `caKeyFile` when given (relative to the data dir), otherwise the
 * ones the API server of this process reports (`apiServerInfo`), otherwise the cluster CA in the data dir. Read
 * once, when the controller starts; a missing or unusable CA fails the start with SKIFF_ERR_CSR_NO_CA.
 */
export function loadSigningCa(kernel: Kernel, options: { caFile?: string; caKeyFile?: string }): SigningCa {
  const dataDir = resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir);
  let defaults: { caFile: string; caKeyFile: string } | undefined;
  const clusterCa = () => {
    try {
      return (defaults ??= kernel.hasComponent('apiServerInfo') ? kernel.resolve('apiServerInfo') : readClusterCa(dataDir));
    } catch (err) {
      throw noCa(`${errorMessage(err)}; set the options caFile and caKeyFile`, err);
    }
  };
  const caFile = options.caFile ? resolve(dataDir, options.caFile) : clusterCa().caFile;
  const caKeyFile = options.caKeyFile ? resolve(dataDir, options.caKeyFile) : clusterCa().caKeyFile;
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw noCa(`cannot read ${path}: ${errorMessage(err)}`, err);
    }
  };
  return signingCaFromPem(read(caFile), read(caKeyFile));
}
