import { sign, verify, type KeyObject } from 'node:crypto';
import { isJsonObject } from '@skiff/api';
import type { SigningKey } from './keys.js';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface JwtHeader {
  alg?: unknown;
  kid?: unknown;
  typ?: unknown;
}

/** A compact JWS taken apart; the signature is not checked yet. */
export interface DecodedJwt {
  header: JwtHeader;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** ES256 signatures in a JWS are r‖s (RFC 7518 §3.4), not DER. */
function keyFor(alg: string, key: KeyObject): KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' } {
  return alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key;
}

/** Signs `payload` as a compact JWS with the key's algorithm, naming the key in `kid`. */
export function signJwt(payload: object, key: SigningKey): string {
  const signingInput = `${encode({ alg: key.alg, kid: key.kid })}.${encode(payload)}`;
  const signature = sign('sha256', Buffer.from(signingInput), keyFor(key.alg, key.privateKey));
  return `${signingInput}.${signature.toString('base64url')}`;
}

function parseObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The parts of a compact JWS, or undefined for anything that is not one (an opaque bearer token). */
export function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) return undefined;
  const [header, payload, signature] = parts as [string, string, string];
  const decodedHeader = parseObject(header);
  const decodedPayload = parseObject(payload);
  if (!decodedHeader || !decodedPayload) return undefined;
  return { header: decodedHeader, payload: decodedPayload, signingInput: `${header}.${payload}`, signature: Buffer.from(signature, 'base64url') };
}

/** Whether one of `keys` made the signature: the header's algorithm must be that key's (never `none`), and its kid, when present, too. */
export function verifyJwt(decoded: DecodedJwt, keys: readonly SigningKey[]): boolean {
  const { alg, kid } = decoded.header;
  return keys.some(
    (key) =>
      key.alg === alg &&
      (kid === undefined || kid === key.kid) &&
      verify('sha256', Buffer.from(decoded.signingInput), keyFor(key.alg, key.publicKey), decoded.signature),
  );
}
