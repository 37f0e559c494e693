import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import type { CertificateSigningRequest } from '@skiff/api';
import { fromDer, ipConversions, type Asn1 } from './der.js';

const { asn1 } = forge;

export type KeyType = 'ec' | 'rsa' | 'ed25519';

export interface RequestOptions {
  commonName?: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  emailAddresses?: readonly string[];
  keyType?: KeyType;
  /** Sign the request with another key than the one it certifies. */
  signedByOtherKey?: boolean;
}

const seq = (items: Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, items);
const oid = (id: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(id).getBytes());

function keyPair(type: KeyType): { privateKey: KeyObject; publicKey: KeyObject } {
  if (type === 'rsa') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (type === 'ed25519') return generateKeyPairSync('ed25519');
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

const SIGNATURE = {
  ec: { oid: '1.2.840.10045.4.3.2', digest: 'sha256', params: false },
  rsa: { oid: '1.2.840.113549.1.1.11', digest: 'sha256', params: true },
  ed25519: { oid: '1.3.101.112', digest: null, params: false },
} as const;

/**
 * A PKCS#10 request built the way any client builds one (forge cannot make EC or Ed25519 requests): the
 * subject with UTF8String values, the alternative names in an extensionRequest attribute. Returns its PEM and
 * the private key's PEM.
 */
export function certificateRequestPem(options: RequestOptions = {}): { pem: string; keyPem: string } {
  const type = options.keyType ?? 'ec';
  const { privateKey, publicKey } = keyPair(type);
  const utf8 = asn1.Type.UTF8 as unknown as forge.asn1.Class;
  const subject = forge.pki.distinguishedNameToAsn1({
    attributes: [
      ...(options.organizations ?? []).map((value) => ({ type: '2.5.4.10', value, valueTagClass: utf8 })),
      ...(options.commonName === undefined ? [] : [{ type: '2.5.4.3', value: options.commonName, valueTagClass: utf8 }]),
    ],
  });
  const generalNames = [
    ...(options.dnsNames ?? []).map((name) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, name)),
    ...(options.ipAddresses ?? []).map((ip) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 7, false, ipConversions.bytesFromIP(ip)!)),
    ...(options.emailAddresses ?? []).map((email) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 1, false, email)),
  ];
  const attributes = generalNames.length
    ? [
        seq([
          oid('1.2.840.113549.1.9.14'),
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, [
            seq([seq([oid('2.5.29.17'), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, asn1.toDer(seq(generalNames)).getBytes())])]),
          ]),
        ]),
      ]
    : [];
  const publicKeyInfo = fromDer(publicKey.export({ type: 'spki', format: 'der' }).toString('binary'), { decodeBitStrings: false });
  const info = seq([
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(0).getBytes()),
    subject,
    publicKeyInfo,
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, attributes),
  ]);
  const signer = options.signedByOtherKey ? keyPair(type).privateKey : privateKey;
  const algorithm = SIGNATURE[type];
  const signature = sign(algorithm.digest, Buffer.from(asn1.toDer(info).getBytes(), 'binary'), signer);
  const request = seq([
    info,
    seq([oid(algorithm.oid), ...(algorithm.params ? [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')] : [])]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\0${signature.toString('binary')}`),
  ]);
  return {
    pem: forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: asn1.toDer(request).getBytes() }),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** A CertificateSigningRequest object for a request, as a client posts it (the server fills in the requester). */
export function csrObject(name: string, pem: string, spec: { signerName: string; usages: string[]; expirationSeconds?: number }): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(pem).toString('base64'), ...spec } as CertificateSigningRequest['spec'],
  };
}

/** The node client request a kubelet makes when it bootstraps. */
export const NODE_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
export const NODE_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
