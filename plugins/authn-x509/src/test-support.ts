import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import forge from 'node-forge';

/** A key pair: forge signs with it, Node's TLS takes its PEM. */
export interface TestKey {
  privateKey: forge.pki.rsa.PrivateKey;
  publicKey: forge.pki.rsa.PublicKey;
  keyPem: string;
}

export interface TestCertificate {
  certPem: string;
  der: Buffer;
  key: TestKey;
  certificate: forge.pki.Certificate;
}

export function newKey(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKey: forge.pki.privateKeyFromPem(privateKey), publicKey: forge.pki.publicKeyFromPem(publicKey), keyPem: privateKey };
}

const HOUR = 60 * 60 * 1000;

export interface CertificateSpec {
  cn?: string;
  o?: string[];
  /** Signed by this CA; self-signed without one. */
  issuer?: TestCertificate;
  key?: TestKey;
  isCa?: boolean;
  /** Extended key usages; none: no extension at all. */
  extKeyUsage?: { clientAuth?: boolean; serverAuth?: boolean };
  notBefore?: Date;
  notAfter?: Date;
}

/** A real certificate made with node-forge, as another CA or a careless tool would make it. */
export function makeCertificate(spec: CertificateSpec): TestCertificate {
  const key = spec.key ?? newKey();
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = key.publicKey;
  certificate.serialNumber = `01${randomBytes(8).toString('hex')}`;
  certificate.validity.notBefore = spec.notBefore ?? new Date(Date.now() - HOUR);
  certificate.validity.notAfter = spec.notAfter ?? new Date(Date.now() + 24 * HOUR);
  const utf8 = forge.asn1.Type.UTF8 as unknown as forge.asn1.Class;
  certificate.setSubject([
    ...(spec.o ?? []).map((value) => ({ name: 'organizationName', value, valueTagClass: utf8 })),
    ...(spec.cn !== undefined ? [{ name: 'commonName', value: spec.cn, valueTagClass: utf8 }] : []),
  ]);
  certificate.setIssuer(spec.issuer ? spec.issuer.certificate.subject.attributes : certificate.subject.attributes);
  const extensions: object[] = [];
  if (spec.isCa)
    extensions.push({ name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true });
  else extensions.push({ name: 'basicConstraints', cA: false });
  if (spec.extKeyUsage) extensions.push({ name: 'extKeyUsage', ...spec.extKeyUsage });
  certificate.setExtensions(extensions);
  certificate.sign(spec.issuer?.key.privateKey ?? key.privateKey, forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(certificate);
  return { certPem, der: new X509Certificate(certPem).raw, key, certificate };
}

/** A CA as `readClusterCa` hands it out. */
export function asClusterCa(ca: TestCertificate): { caPem: string; caKeyPem: string } {
  return { caPem: ca.certPem, caKeyPem: ca.key.keyPem };
}

/** The cluster CA (as `readClusterCa` reads it) as a test certificate, to sign with it what it would never issue. */
export function fromClusterCa(ca: { caPem: string; caKeyPem: string }): TestCertificate {
  const certificate = forge.pki.certificateFromPem(ca.caPem);
  const privateKey = forge.pki.privateKeyFromPem(ca.caKeyPem) as forge.pki.rsa.PrivateKey;
  return {
    certPem: ca.caPem,
    der: new X509Certificate(ca.caPem).raw,
    key: { privateKey, publicKey: certificate.publicKey as forge.pki.rsa.PublicKey, keyPem: ca.caKeyPem },
    certificate,
  };
}
