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
// Names in-cluster clients use for the API server, as in Kubernetes.
const CLUSTER_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];

/**
 * The cluster CA and the API server's serving certificate in `<dataDir>/pki/`: created on first start and
 * reused afterwards. The serving certificate is issued again (by the same CA) when it expires within a day
 * or does not cover a host the server is now reached by. Keys are written with mode 0600, and every file
 * atomically (a client reading ca.crt during a start never sees it empty).
 */
export function ensurePki(dataDir: string, host: string): Pki {
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
    const { dnsNames, ips } = servingNames(host);
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

/** Every name the server may be reached by: loopback, this machine, the configured host, in-cluster names. */
export function servingNames(host: string): { dnsNames: string[]; ips: string[] } {
  const dnsNames = new Set(['localhost', hostname(), ...CLUSTER_NAMES]);
  const ips = new Set(['127.0.0.1', '::1']);
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
  // A positive serial: clear the top bit of the first byte.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
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
