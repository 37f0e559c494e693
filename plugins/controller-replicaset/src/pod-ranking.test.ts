import { describe, expect, it } from 'vitest';
import { POD_DELETION_COST_ANNOTATION, podsToDelete } from './pod-ranking.js';
import { testPod } from './test-pods.js';

const names = (pods: { metadata: { name?: string } }[]) => pods.map((pod) => pod.metadata.name);

describe('podsToDelete', () => {
  it('prefers unscheduled, then pending, then not ready, then ready pods', () => {
    const pods = [
      testPod('ready', { node: 'n1', readySince: '2024-01-01T00:01:00Z' }),
      testPod('not-ready', { node: 'n2' }),
      testPod('pending', { node: 'n3', phase: 'Pending' }),
      testPod('unscheduled', { phase: 'Pending' }),
    ];
    expect(names(podsToDelete(pods, 4))).toEqual(['unscheduled', 'pending', 'not-ready', 'ready']);
    expect(names(podsToDelete(pods, 2))).toEqual(['unscheduled', 'pending']);
  });

  it('puts Unknown between Pending and Running', () => {
    const pods = [testPod('running', { node: 'a' }), testPod('unknown', { node: 'b', phase: 'Unknown' }), testPod('pending', { node: 'c', phase: 'Pending' })];
    expect(names(podsToDelete(pods, 3))).toEqual(['pending', 'unknown', 'running']);
  });

  it('among ready pods, deletes the one ready for the shortest time first', () => {
    const pods = [testPod('old', { node: 'a', readySince: '2024-01-01T00:00:10Z' }), testPod('young', { node: 'b', readySince: '2024-01-01T00:05:00Z' })];
    expect(names(podsToDelete(pods, 1))).toEqual(['young']);
  });

  it('deletes pods with more restarts first, then newer pods first', () => {
    const restarts = [testPod('calm', { node: 'a', restarts: 0 }), testPod('crashy', { node: 'b', restarts: 5 })];
    expect(names(podsToDelete(restarts, 1))).toEqual(['crashy']);
    const ages = [testPod('older', { node: 'a', created: '2024-01-01T00:00:00Z' }), testPod('newer', { node: 'b', created: '2024-01-02T00:00:00Z' })];
    expect(names(podsToDelete(ages, 1))).toEqual(['newer']);
  });

  it('honours pod-deletion-cost and spreads by deleting where siblings are doubled up', () => {
    const cost = [
      testPod('expensive', { node: 'a', annotations: { [POD_DELETION_COST_ANNOTATION]: '100' } }),
      testPod('cheap', { node: 'b', annotations: { [POD_DELETION_COST_ANNOTATION]: '-5' } }),
      testPod('default', { node: 'c' }),
    ];
    expect(names(podsToDelete(cost, 3))).toEqual(['cheap', 'default', 'expensive']);
    const crowded = [
      testPod('alone', { node: 'a' }),
      testPod('twin-1', { node: 'b', created: '2024-01-01T00:00:00Z' }),
      testPod('twin-2', { node: 'b', created: '2024-01-01T00:00:00Z' }),
    ];
    expect(names(podsToDelete(crowded, 1))[0]).toMatch(/^twin-/);
  });

  it('sorts pods without a creation time as the newest', () => {
    const pods = [testPod('dated', { node: 'a' }), { ...testPod('undated', { node: 'b' }), metadata: { name: 'undated' } }];
    expect(names(podsToDelete(pods, 1))).toEqual(['undated']);
  });
});
