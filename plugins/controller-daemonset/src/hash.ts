import type { PodTemplateSpec } from '@skiff/api';
import { canonicalJson } from './canonical-json.js';

/** Letters and digits that cannot spell words or be mistaken for each other, as Kubernetes' safe encoding uses. */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/**
 * The `controller-revision-hash` of a DaemonSet's pod template: FNV-1a (32 bit) over the template's
 * canonical JSON and, when set, `status.collisionCount`, written over a safe alphabet. Equal templates
 * hash alike across processes and restarts; a collision is resolved by bumping collisionCount.
 */
export function templateHash(template: PodTemplateSpec, collisionCount?: number): string {
  let hash = fnv1a(FNV32_OFFSET, Buffer.from(canonicalJson(template), 'utf8'));
  if (collisionCount !== undefined) {
    const count = Buffer.alloc(4);
    count.writeUInt32LE(collisionCount >>> 0);
    hash = fnv1a(hash, count);
  }
  return [...String(hash)].map((digit) => SAFE_ALPHABET[digit.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

function fnv1a(seed: number, bytes: Uint8Array): number {
  let hash = seed;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, FNV32_PRIME) >>> 0;
  return hash;
}
