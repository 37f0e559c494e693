import { BASELINE_CHECKS } from './baseline.js';
import { RESTRICTED_CHECKS } from './restricted.js';
import type { CheckDefinition } from './types.js';

/** Every check, baseline ones first, each level in id order: the order violations are listed in. */
export const CHECKS: readonly CheckDefinition[] = [
  ...[...BASELINE_CHECKS].sort((a, b) => compareIds(a.id, b.id)),
  ...[...RESTRICTED_CHECKS].sort((a, b) => compareIds(a.id, b.id)),
];

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type { CheckDefinition, PodCheck, PodView, Violation } from './types.js';
