import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { writeFileAtomically } from '@skiff/kernel';
import { ApiServerError } from './errors.js';
import { errorMessage } from '@skiff/api';

export interface Pki {
  dir: string;
  caFile: string;
  caKeyFile: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const CA_VALIDITY_DAYS = 3650;
const SERVING_VALIDITY_DAYS = 365;
/** Client certificates last a year unless asked otherwise, as kubeadm's. */
export const CLIENT_CERTIFICATE_DEFAULT_SECONDS = 365 * 24 * 60 * 60;
// Names in-cluster clients use for the API server, as in Kubernetes.
const CLUSTER_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];

/** The cluster CA as files in `<dataDir>/pki/`, read back: what issuing client certificates needs. */
export interface ClusterCa {
  caFile: string;
  caKeyFile: string;
  caPem: string;
  caKeyPem: string;
}

/** Who a client certificate names: the user (its CN) and the user's groups (one O each). */
export interface ClientCertificateRequest {
  user: string;
  groups?: readonly string[];
  /** How long it is valid from now; never past the CA's own expiry. Default: a year. */
  validitySeconds?: number;
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
  notAfter: Date;
}

/**
 * Reads the cluster CA that `ensurePki` made in `<dataDir>/pki/`. Throws SKIFF_ERR_APISERVER_NO_CA when the data
 * dir has none (the cluster never started there) or its files cannot be read.
 */
export function readClusterCa(dataDir: string): ClusterCa {
  const dir = join(dataDir, 'pki');
  const caFile = join(dir, 'ca.crt');
  const caKeyFile = join(dir, 'ca.key');
  if (!existsSync(caFile) || !existsSync(caKeyFile)) throw new ApiServerError('SKIFF_ERR_APISERVER_NO_CA', { dir });
  try {
    return { caFile, caKeyFile, caPem: readFileSync(caFile, 'utf8'), caKeyPem: readFileSync(caKeyFile, 'utf8') };
  } catch (err) {
    throw new ApiServerError('SKIFF_ERR_APISERVER_PKI', { dir, detail: errorMessage(err) }, { cause: err });
  }
}

/**
 * Issues a client certificate signed by the cluster CA, with a new RSA key: CN the user, one O per group,
 * extended key usage clientAuth only. Kubernetes' x509 authenticators (and @skiff/plugin-authn-x509) read the
 * user and groups back from exactly these fields.
 */
export function issueClientCertificate(ca: Pick<ClusterCa, 'caPem' | 'caKeyPem'>, request: ClientCertificateRequest): IssuedCertificate {
  const { user, groups = [], validitySeconds = CLIENT_CERTIFICATE_DEFAULT_SECONDS } = request;
  if (!user) throw new TypeError('a client certificate needs a user name (its CN)');
  if (groups.some((group) => !group)) throw new TypeError('group names of a client certificate must not be empty');
  if (!Number.isInteger(validitySeconds) || validitySeconds < 1)
    throw new TypeError(`validitySeconds must be a positive whole number (got ${validitySeconds})`);
  const caCertificate = forge.pki.certificateFromPem(ca.caPem);
  const caKey = forge.pki.privateKeyFromPem(ca.caKeyPem);
  const keys = rsaKeys();
  const certificate = newCertificate(keys.publicKey, 0);
  // Whole seconds, as the certificate holds them.
  const notAfter = Math.min(Math.floor(Date.now() / 1000 + validitySeconds) * 1000, caCertificate.validity.notAfter.getTime());
  certificate.validity.notAfter = new Date(notAfter);
  // UTF8String values: a PrintableString cannot hold "@", "_" or non-ASCII letters, which user names may have.
  // (@types/node-forge calls the field a tag class; forge reads a tag type there.)
  const utf8 = forge.asn1.Type.UTF8 as unknown as forge.asn1.Class;
  certificate.setSubject([
    ...groups.map((value) => ({ name: 'organizationName', value, valueTagClass: utf8 })),
    { name: 'commonName', value: user, valueTagClass: utf8 },
  ]);
  certificate.setIssuer(caCertificate.subject.attributes);
  certificate.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCertificate.generateSubjectKeyIdentifier().getBytes() },
  ]);
  certificate.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(certificate), keyPem: keys.keyPem, notAfter: certificate.validity.notAfter };
}

/** Writes a certificate and its key, the key readable by its owner only (0600), each atomically. */
export function writeCertificateFiles(certFile: string, keyFile: string, issued: Pick<IssuedCertificate, 'certPem' | 'keyPem'>): void {
  writeFileAtomically(keyFile, issued.keyPem, 0o600);
  writeFileAtomically(certFile, issued.certPem, 0o644);
}

/**
 * The cluster CA and the API server's serving certificate in `<dataDir>/pki/`: created on first start and
 * reused afterwards. The serving certificate is issued again (by the same CA) when it expires within a day
 * or does not cover a host the server is now reached by. Keys are written with mode 0600, and every file
 * atomically (a client reading ca.crt during a start never sees it empty).
 */
export function ensurePki(dataDir: string, host: string, extraIps: readonly string[] = []): Pki {
  const dir = join(dataDir, 'pki');
  const files = { ca: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'), cert: join(dir, 'apiserver.crt'), key: join(dir, 'apiserver.key') };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!existsSync(files.ca) || !existsSync(files.caKey)) {
      const ca = issueCa();
      writeFileAtomically(files.caKey, ca.keyPem, 0o600);
      writeFileAtomically(files.ca, ca.certPem, 0o644);
    }
    const caPem = readFileSync(files.ca, 'utf8');
    const { dnsNames, ips } = servingNames(host, extraIps);
    if (!existsSync(files.cert) || !existsSync(files.key) || !covers(readFileSync(files.cert, 'utf8'), dnsNames, ips)) {
      const serving = issueServing(caPem, readFileSync(files.caKey, 'utf8'), dnsNames, ips);
      writeFileAtomically(files.key, serving.keyPem, 0o600);
      writeFileAtomically(files.cert, serving.certPem, 0o644);
    }
    chmodSync(files.caKey, 0o600);
    chmodSync(files.key, 0o600);
    return { dir, caFile: files.ca, caKeyFile: files.caKey, caPem, certPem: readFileSync(files.cert, 'utf8'), keyPem: readFileSync(files.key, 'utf8') };
  } catch (err) {
    throw new ApiServerError('SKIFF_ERR_APISERVER_PKI', { dir, detail: errorMessage(err) }, { cause: err });
  }
}

/**
 * Every name the server may be reached by: loopback, this machine, the configured host, in-cluster names, and
 * `extraIps` (the `kubernetes` Service's cluster IPs, the advertised address).
 */
export function servingNames(host: string, extraIps: readonly string[] = []): { dnsNames: string[]; ips: string[] } {
  const dnsNames = new Set(['localhost', hostname(), ...CLUSTER_NAMES]);
  const ips = new Set(['127.0.0.1', '::1', ...extraIps]);
  if (isIP(host)) {
    if (host !== '0.0.0.0' && host !== '::') ips.add(host);
  } else if (host) dnsNames.add(host);
  return { dnsNames: [...dnsNames], ips: [...ips] };
}

function covers(certPem: string, dnsNames: string[], ips: string[]): boolean {
  const certificate = new X509Certificate(certPem);
  if (Date.parse(certificate.validTo) - Date.now() < DAY_MS) return false;
  return dnsNames.every((name) => certificate.checkHost(name, { wildcards: false }) !== undefined) && ips.every((ip) => certificate.checkIP(ip) !== undefined);
}

/** RSA keys come from Node's crypto (native); forge's pure-JS key generation takes seconds. */
function rsaKeys(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKey: forge.pki.privateKeyFromPem(privateKey), publicKey: forge.pki.publicKeyFromPem(publicKey), keyPem: privateKey };
}

function newCertificate(publicKey: forge.pki.rsa.PublicKey, validityDays: number): forge.pki.Certificate {
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = publicKey;
  // A positive serial in minimal DER: top bit clear (not negative), next bit set (no leading zero byte, which Go's parser refuses).
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  certificate.serialNumber = serial.toString('hex');
  certificate.validity.notBefore = new Date(Date.now() - 5 * 60 * 1000);
  certificate.validity.notAfter = new Date(Date.now() + validityDays * DAY_MS);
  return certificate;
}

function issueCa(): { certPem: string; keyPem: string } {
  const keys = rsaKeys();
  const certificate = newCertificate(keys.publicKey, CA_VALIDITY_DAYS);
  const subject = [{ name: 'commonName', value: 'skiff-ca' }];
  certificate.setSubject(subject);
  certificate.setIssuer(subject);
  certificate.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  certificate.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(certificate), keyPem: keys.keyPem };
}

function issueServing(caPem: string, caKeyPem: string, dnsNames: string[], ips: string[]): { certPem: string; keyPem: string } {
  const ca = forge.pki.certificateFromPem(caPem);
  const caKey = forge.pki.privateKeyFromPem(caKeyPem);
  const keys = rsaKeys();
  const certificate = newCertificate(keys.publicKey, SERVING_VALIDITY_DAYS);
  certificate.setSubject([{ name: 'commonName', value: 'skiff-apiserver' }]);
  certificate.setIssuer(ca.subject.attributes);
  certificate.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  certificate.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(certificate), keyPem: keys.keyPem };
}
