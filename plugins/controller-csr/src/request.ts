import { createPublicKey, verify } from 'node:crypto';
import forge from 'node-forge';
import { fromDer, ipConversions, type Asn1 } from './der.js';
import { CsrError } from './errors.js';

const { asn1 } = forge;

/** A PKCS#10 certificate request, read as far as the approver and the signer need. */
export interface CertificateRequest {
  /** The subject Name as the request encodes it: the certificate carries it unchanged. */
  subject: Asn1;
  /** The SubjectPublicKeyInfo, likewise; RSA, EC or Ed25519 (forge decodes RSA keys only, so it is passed on as it is). */
  publicKeyInfo: Asn1;
  /** The subject's common name ('' when it has none) and organizations. */
  commonName: string;
  organizations: string[];
  /** Subject alternative names of the request's extensionRequest attribute. */
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

const OID = Object.freeze({
  COMMON_NAME: '2.5.4.3',
  ORGANIZATION: '2.5.4.10',
  EXTENSION_REQUEST: '1.2.840.113549.1.9.14',
  SUBJECT_ALT_NAME: '2.5.29.17',
});

/** Signature algorithms a request may be signed with, and the digest each uses (none for Ed25519). */
const SIGNATURE_DIGESTS: Readonly<Record<string, string | null>> = Object.freeze({
  '1.2.840.113549.1.1.11': 'sha256', // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256', // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null, // Ed25519
});

/** GeneralName tags of the subject alternative names Kubernetes signers look at. */
const GENERAL_NAME = Object.freeze({ EMAIL: 1, DNS: 2, URI: 6, IP: 7 });

const bad = (detail: string) => new CsrError('SKIFF_ERR_CSR_BAD_REQUEST', { detail });

function children(node: Asn1 | undefined, what: string): Asn1[] {
  if (!node || !Array.isArray(node.value)) throw bad(`${what} is not a constructed ASN.1 value`);
  return node.value;
}

function bytes(node: Asn1 | undefined, what: string): string {
  if (!node || typeof node.value !== 'string') throw bad(`${what} is not a primitive ASN.1 value`);
  return node.value;
}

/** The text of a directory string: UTF8String and BMPString decoded, the ASCII-range types taken as they are. */
function directoryString(node: Asn1): string {
  const raw = bytes(node, 'a subject attribute value');
  if (node.type === asn1.Type.UTF8) return forge.util.decodeUtf8(raw);
  if (node.type === asn1.Type.BMPSTRING) return Buffer.from(raw, 'binary').swap16().toString('utf16le');
  return raw;
}

/** The type of each attribute of a Name (a SEQUENCE of SETs of type-and-value pairs), in order, with its text. */
function nameAttributes(name: Asn1): { type: string; value: string }[] {
  return children(name, 'the subject').flatMap((set) =>
    children(set, 'a relative distinguished name').map((pair) => {
      const [type, value] = children(pair, 'a subject attribute');
      return { type: asn1.derToOid(bytes(type, 'an attribute type')), value: directoryString(value!) };
    }),
  );
}

/** The address an IP SAN holds: dotted IPv4, or IPv6 in forge's textual form. */
function ipAddress(raw: string): string {
  const ip = ipConversions.bytesToIP(raw);
  if (!ip) throw bad(`an IP address SAN of ${raw.length} bytes`);
  return ip;
}

/** The subject alternative names of the request's extensionRequest attribute, if it has one. */
function alternativeNames(attributes: Asn1 | undefined): Pick<CertificateRequest, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris'> {
  const names = { dnsNames: [] as string[], ipAddresses: [] as string[], emailAddresses: [] as string[], uris: [] as string[] };
  if (!attributes) return names;
  for (const attribute of children(attributes, 'the request attributes')) {
    const [type, values] = children(attribute, 'a request attribute');
    if (asn1.derToOid(bytes(type, 'an attribute type')) !== OID.EXTENSION_REQUEST) continue;
    for (const extensions of children(values, 'the extensionRequest values')) {
      for (const extension of children(extensions, 'the requested extensions')) {
        const parts = children(extension, 'an extension');
        if (asn1.derToOid(bytes(parts[0], 'an extension id')) !== OID.SUBJECT_ALT_NAME) continue;
        const generalNames = fromDer(bytes(parts.at(-1), 'the subjectAltName value'), { decodeBitStrings: false });
        for (const name of children(generalNames, 'the subjectAltName')) {
          if (name.tagClass !== asn1.Class.CONTEXT_SPECIFIC) continue;
          if (name.type === GENERAL_NAME.DNS) names.dnsNames.push(bytes(name, 'a DNS name'));
          else if (name.type === GENERAL_NAME.IP) names.ipAddresses.push(ipAddress(bytes(name, 'an IP address')));
          else if (name.type === GENERAL_NAME.EMAIL) names.emailAddresses.push(bytes(name, 'an email address'));
          else if (name.type === GENERAL_NAME.URI) names.uris.push(bytes(name, 'a URI'));
        }
      }
    }
  }
  return names;
}

/** The sizes of the DER value at `offset`: its tag-and-length header, and the whole value. */
function derSizes(der: Buffer, offset: number): { header: number; total: number } {
  const first = der[offset + 1];
  if (first === undefined) throw bad('the DER ends early');
  if (first < 0x80) return { header: 2, total: 2 + first };
  const octets = first & 0x7f;
  let length = 0;
  for (let i = 0; i < octets; i++) length = length * 256 + (der[offset + 2 + i] ?? 0);
  return { header: 2 + octets, total: 2 + octets + length };
}

/** Checks the request's self-signature: whoever sent it holds the private key of the key it certifies. */
function checkSignature(der: Buffer, publicKeyInfo: Asn1, algorithm: Asn1, signature: Asn1): void {
  const algorithmOid = asn1.derToOid(bytes(children(algorithm, 'the signature algorithm')[0], 'the signature algorithm id'));
  if (!(algorithmOid in SIGNATURE_DIGESTS)) throw bad(`unsupported signature algorithm ${algorithmOid}`);
  // The signed bytes are the request info exactly as sent: the first element of the outer SEQUENCE.
  const infoStart = derSizes(der, 0).header;
  const info = der.subarray(infoStart, infoStart + derSizes(der, infoStart).total);
  let valid: boolean;
  try {
    const key = createPublicKey({ key: Buffer.from(asn1.toDer(publicKeyInfo).getBytes(), 'binary'), format: 'der', type: 'spki' });
    const signatureBytes = Buffer.from(bytes(signature, 'the signature'), 'binary').subarray(1);
    valid = verify(SIGNATURE_DIGESTS[algorithmOid] ?? null, info, key, signatureBytes);
  } catch (err) {
    throw bad(`its signature cannot be checked (${(err as Error).message})`);
  }
  if (!valid) throw bad('its signature does not match its public key');
}

/**
 * Reads `spec.request` of a CertificateSigningRequest: base64 (JSON bytes) of PEM text holding a `CERTIFICATE
 * REQUEST` block. Throws SKIFF_ERR_CSR_BAD_REQUEST when there is none, it is not a PKCS#10 request, or its
 * signature does not verify.
 */
export function parseCertificateRequest(request: string | undefined): CertificateRequest {
  let block: forge.pem.ObjectPEM | undefined;
  try {
    block = forge.pem.decode(Buffer.from(request ?? '', 'base64').toString('latin1')).find((candidate) => candidate.type === 'CERTIFICATE REQUEST');
  } catch (err) {
    throw bad(`its PEM cannot be read (${(err as Error).message})`);
  }
  if (!block) throw bad('it holds no CERTIFICATE REQUEST PEM block');
  try {
    return readRequest(block.body);
  } catch (err) {
    if (err instanceof CsrError) throw err;
    throw bad(`it is not a PKCS#10 request (${(err as Error).message})`);
  }
}

function readRequest(der: string): CertificateRequest {
  const [info, algorithm, signature] = children(fromDer(der, { decodeBitStrings: false }), 'the request');
  const [, subject, publicKeyInfo, attributes] = children(info, 'the request info');
  if (!subject || !publicKeyInfo || !algorithm || !signature) throw bad('it lacks a subject, a public key or a signature');
  checkSignature(Buffer.from(der, 'binary'), publicKeyInfo, algorithm, signature);
  const subjectAttributes = nameAttributes(subject);
  return {
    subject,
    publicKeyInfo,
    commonName: subjectAttributes.find((attribute) => attribute.type === OID.COMMON_NAME)?.value ?? '',
    organizations: subjectAttributes.filter((attribute) => attribute.type === OID.ORGANIZATION).map((attribute) => attribute.value),
    ...alternativeNames(attributes),
  };
}
