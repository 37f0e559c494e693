import { createHash } from 'node:crypto';
import forge from 'node-forge';

export type Asn1 = forge.asn1.Asn1;

/**
 * forge's DER reader with BIT STRINGs left as they are: by default forge guesses whether a BIT STRING holds DER
 * itself, which a public key's bits sometimes happen to look like. (Its typings omit the options argument.)
 */
export const fromDer = forge.asn1.fromDer as unknown as (bytes: string, options: { decodeBitStrings: boolean }) => Asn1;

/** SHA-1 of the subjectPublicKey BIT STRING of a SubjectPublicKeyInfo (less the unused-bits octet): RFC 5280's key identifier. */
export function keyIdentifierOf(publicKeyInfo: Asn1): Buffer {
  const bits = (publicKeyInfo.value as Asn1[])[1]?.value;
  if (typeof bits !== 'string') throw new TypeError('a SubjectPublicKeyInfo without a public key BIT STRING');
  return createHash('sha1').update(Buffer.from(bits, 'binary').subarray(1)).digest();
}

/** forge's IP address conversions (IPv4 and IPv6, text to bytes and back; null when it is no address), missing from its typings. */
export const ipConversions = forge.util as unknown as { bytesToIP(bytes: string): string | null; bytesFromIP(ip: string): string | null };
