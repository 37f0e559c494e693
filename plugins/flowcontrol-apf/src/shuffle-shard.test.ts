import { describe, expect, it } from 'vitest';
import { dealHand, flowHash } from './shuffle-shard.js';

describe('shuffle sharding', () => {
  it('deals handSize distinct queues out of the deck, the same ones for the same flow', () => {
    for (let i = 0; i < 200; i++) {
      const hash = flowHash('service-accounts', `system:serviceaccount:ns:user-${i}`);
      const hand = dealHand(hash, 128, 6);
      expect(hand).toHaveLength(6);
      expect(new Set(hand).size).toBe(6);
      expect(hand.every((card) => Number.isInteger(card) && card >= 0 && card < 128)).toBe(true);
      expect(dealHand(hash, 128, 6)).toEqual(hand);
    }
  });

  it('reads the hash as a mixed-radix number: each digit picks among the queues not dealt yet', () => {
    // 2 + 5 × (1 + 4 × 2): the second card, 1, counts among [0, 1, 3, 4]; the third, 2, among [0, 3, 4]: 4.
    expect(dealHand(BigInt(2 + 5 * (1 + 4 * 2)), 5, 3)).toEqual([2, 1, 4]);
    expect(dealHand(0n, 4, 4)).toEqual([0, 1, 2, 3]);
    expect(dealHand(123n, 3, 5)).toHaveLength(3);
  });

  it('spreads flows evenly over the queues, and rarely gives two flows the same hand', () => {
    const hits = new Array<number>(64).fill(0);
    const hands = new Set<string>();
    const flows = 6400;
    for (let i = 0; i < flows; i++) {
      const hand = dealHand(flowHash('global-default', `user-${i}`), 64, 6);
      for (const card of hand) hits[card]!++;
      hands.add([...hand].sort((a, b) => a - b).join(','));
    }
    const expected = (flows * 6) / 64;
    expect(Math.min(...hits)).toBeGreaterThan(expected * 0.8);
    expect(Math.max(...hits)).toBeLessThan(expected * 1.2);
    expect(hands.size).toBeGreaterThan(flows - 5);
  });

  it('hashes the schema and the distinguisher apart', () => {
    expect(flowHash('a', 'bc')).not.toBe(flowHash('ab', 'c'));
    expect(flowHash('a', 'b')).toBe(flowHash('a', 'b'));
  });
});
