import { randomBytes, sign } from 'node:crypto';
import forge from 'node-forge';
import type { SigningCa } from './ca.js';
import { keyIdentifierOf, type Asn1 } from './der.js';
import { BACKDATE_SECONDS, MIN_EXPIRATION_SECONDS } from './names.js';
import type { CertificateRequest } from './request.js';

const { asn1 } = forge;

/** Key usage bits of the certificate, by the usage names of `spec.usages` (forge's field names). */
const KEY_USAGES: Readonly<Record<string, string>> = Object.freeze({
  signing: 'digitalSignature',
  'digital signature': 'digitalSignature',
  'content commitment': 'nonRepudiation',
  'key encipherment': 'keyEncipherment',
  'key agreement': 'keyAgreement',
  'data encipherment': 'dataEncipherment',
  'cert sign': 'keyCertSign',
  'crl sign': 'cRLSign',
  'encipher only': 'encipherOnly',
  'decipher only': 'decipherOnly',
});

/** Extended key usage OIDs, by the usage names of `spec.usages`. */
const EXTENDED_KEY_USAGES: Readonly<Record<string, string>> = Object.freeze({
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
});

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/**
 * When a certificate issued at `nowMs` is valid: from a few minutes back (clock skew) for the shortest of the
 * request's `expirationSeconds` (at least 600), the signer's `durationSeconds`, and what is left of the CA's own
 * validity. Whole seconds, as a certificate holds them.
 */
export function validityPeriod(nowMs: number, limits: { expirationSeconds?: number; durationSeconds: number; caNotAfter: Date }): Validity {
  const now = Math.floor(nowMs / 1000);
  const requested = limits.expirationSeconds === undefined ? Infinity : Math.max(limits.expirationSeconds, MIN_EXPIRATION_SECONDS);
  const notAfter = Math.min((now + Math.min(requested, limits.durationSeconds)) * 1000, limits.caNotAfter.getTime());
  return { notBefore: new Date((now - BACKDATE_SECONDS) * 1000), notAfter: new Date(notAfter) };
}

/** UTCTime until 2049, GeneralizedTime from 2050, as RFC 5280 has it. */
function time(date: Date): Asn1 {
  return date.getUTCFullYear() < 2050
    ? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTCTIME, false, asn1.dateToUtcTime(date))
    : asn1.create(asn1.Class.UNIVERSAL, asn1.Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(date));
}

const objectIdentifier = (oid: string): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(oid).getBytes());

/** A random positive serial number of 128 bits whose DER needs no leading zero octet (a minimal INTEGER, as strict parsers demand). */
function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f || 0x01;
  return serial.toString('binary');
}

/** The certificate's extensions from the request and its usages: forge encodes its named extension fields only inside a certificate. */
function extensions(ca: SigningCa, request: CertificateRequest, usages: readonly string[]): Asn1 {
  const keyUsage = Object.fromEntries(usages.filter((usage) => usage in KEY_USAGES).map((usage) => [KEY_USAGES[usage]!, true]));
  const extendedKeyUsages = [...new Set(usages.filter((usage) => usage in EXTENDED_KEY_USAGES).map((usage) => EXTENDED_KEY_USAGES[usage]!))];
  const altNames = [
    ...request.dnsNames.map((value) => ({ type: 2, value })),
    ...request.ipAddresses.map((ip) => ({ type: 7, ip })),
    ...request.emailAddresses.map((value) => ({ type: 1, value })),
    ...request.uris.map((value) => ({ type: 6, value })),
  ];
  const holder = forge.pki.createCertificate();
  holder.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    ...(Object.keys(keyUsage).length ? [{ name: 'keyUsage', critical: true, ...keyUsage }] : []),
    // Encoded here: forge maps the OIDs it knows back to names, which it then cannot encode.
    ...(extendedKeyUsages.length
      ? [{ name: 'extKeyUsage', value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, extendedKeyUsages.map(objectIdentifier)) }]
      : []),
    // With an empty subject the names are the certificate's only identity, and RFC 5280 makes them critical.
    ...(altNames.length ? [{ name: 'subjectAltName', altNames, critical: (request.subject.value as Asn1[]).length === 0 }] : []),
    {
      name: 'subjectKeyIdentifier',
      value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, keyIdentifierOf(request.publicKeyInfo).toString('binary')),
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.keyIdentifier.toString('binary') },
  ]);
  return (forge.pki as unknown as { certificateExtensionsToAsn1(extensions: unknown[]): Asn1 }).certificateExtensionsToAsn1(holder.extensions);
}

/**
 * Signs a certificate for the request with the CA: the request's subject and public key as they are, its DNS,
 * IP, email and URI alternative names, key usages and extended key usages from `usages`, never a CA. Returns
 * the certificate as PEM.
 */
export function issueCertificate(ca: SigningCa, request: CertificateRequest, usages: readonly string[], validity: Validity): string {
  const { oid, digest, nullParameters } = ca.signatureAlgorithm;
  const algorithm = () =>
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      objectIdentifier(oid),
      ...(nullParameters ? [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')] : []),
    ]);
  const tbs = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(2).getBytes())]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, serialNumber()),
    algorithm(),
    ca.subject,
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [time(validity.notBefore), time(validity.notAfter)]),
    request.subject,
    request.publicKeyInfo,
    extensions(ca, request, usages),
  ]);
  const signature = sign(digest, Buffer.from(asn1.toDer(tbs).getBytes(), 'binary'), ca.key);
  const certificate = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs,
    algorithm(),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\0${signature.toString('binary')}`),
  ]);
  return forge.pem.encode({ type: 'CERTIFICATE', body: asn1.toDer(certificate).getBytes() });
}
