import { createHmac, timingSafeEqual } from 'node:crypto';
import { isJsonObject } from '@skiff/api';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function hmac(protectedHeader: string, kubeconfig: string, tokenId: string, tokenSecret: string): Buffer {
  return createHmac('sha256', `${tokenId}.${tokenSecret}`)
    .update(`${protectedHeader}.${Buffer.from(kubeconfig, 'utf8').toString('base64url')}`)
    .digest();
}

/**
 * The signature the bootstrap signer publishes for one token: a JWS over the kubeconfig, HS256 keyed with the whole
 * token `<id>.<secret>`, header `{"alg":"HS256","kid":"<id>"}`, in compact serialization with the payload left out
 * (`<header>..<signature>`) — the reader already holds the kubeconfig it checks.
 */
export function signClusterInfo(kubeconfig: string, tokenId: string, tokenSecret: string): string {
  const protectedHeader = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId }), 'utf8').toString('base64url');
  return `${protectedHeader}..${hmac(protectedHeader, kubeconfig, tokenId, tokenSecret).toString('base64url')}`;
}

/**
 * Whether `jws` (a `jws-kubeconfig-<id>` value of cluster-info) is a signature of exactly this kubeconfig by this
 * token: what a joining node checks before it trusts the CA the kubeconfig carries. The header must name HS256 and
 * the token's id, and carry no critical extensions; the signature is compared in constant time.
 */
export function verifyClusterInfoSignature(kubeconfig: string, jws: string, tokenId: string, tokenSecret: string): boolean {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return false;
  const [protectedHeader, , signature] = parts as [string, string, string];
  if (!BASE64URL.test(protectedHeader) || !BASE64URL.test(signature)) return false;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  if (!isJsonObject(header) || header.alg !== 'HS256' || header.kid !== tokenId || 'crit' in header) return false;
  const expected = hmac(protectedHeader, kubeconfig, tokenId, tokenSecret);
  const given = Buffer.from(signature, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
