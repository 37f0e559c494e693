import { createHash } from 'node:crypto';

/** Flows hashed lately: a flow sends many requests, and hashing is most of what classifying one costs. */
const hashes = new Map<string, bigint>();
const MAX_HASHES = 10_000;

/** A flow's 64-bit hash, as Kubernetes computes it: SHA-256 of the FlowSchema's name, a zero byte and the distinguisher. */
export function flowHash(flowSchema: string, distinguisher: string): bigint {
  const flow = `${flowSchema}\0${distinguisher}`;
  let hash = hashes.get(flow);
  if (hash === undefined) {
    hash = createHash('sha256').update(flow).digest().readBigUInt64LE(0);
    if (hashes.size >= MAX_HASHES) hashes.clear();
    hashes.set(flow, hash);
  }
  return hash;
}

/**
 * Shuffle sharding: deals `handSize` distinct queue indexes out of `deckSize` from the hash, as a mixed-radix
 * number (deckSize × (deckSize − 1) × … choices). Two flows share their whole hand only rarely, so a heavy flow
 * fills its own queues and leaves other flows a short queue in theirs.
 */
export function dealHand(hash: bigint, deckSize: number, handSize: number): number[] {
  const hand: number[] = [];
  const taken: number[] = [];
  let rest = hash;
  for (let i = 0; i < handSize && i < deckSize; i++) {
    const remaining = BigInt(deckSize - i);
    let card = Number(rest % remaining);
    rest /= remaining;
    // `card` counts among the cards not dealt yet: step over the dealt ones below it, in ascending order.
    for (const dealt of taken) if (card >= dealt) card++;
    hand.push(card);
    taken.splice(sortedIndex(taken, card), 0, card);
  }
  return hand;
}

function sortedIndex(sorted: number[], value: number): number {
  let index = 0;
  while (index < sorted.length && sorted[index]! < value) index++;
  return index;
}
