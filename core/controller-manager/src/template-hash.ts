import { canonicalJson } from './canonical-json.js';

/** Letters and digits that cannot spell words or be mistaken for each other (no vowels, no 0/1/3). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/**
 * The hash a controller puts in `pod-template-hash` (Deployments) or `controller-revision-hash` and
 * ControllerRevision names (DaemonSets, StatefulSets): FNV-1a (32 bit) over the canonical JSON of a pod
 * template, or of what a revision records of it (keys sorted, so field order does not matter), then, when
 * set, the owner's `collisionCount`, written as a short string over a safe alphabet. Equal values hash
 * alike across processes and restarts; a name collision is escaped by bumping collisionCount.
 */
export function templateHash(template: unknown, collisionCount?: number): string {
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
