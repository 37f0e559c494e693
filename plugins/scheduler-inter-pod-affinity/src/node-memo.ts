import type { NodeInfo } from '@skiff/kernel';

/** Answers kept per node; a node asked about more distinct questions than this starts over. */
const MAX_ANSWERS_PER_NODE = 32;

interface Memo {
  generation: number;
  answers: Map<string, unknown>;
}

// Keyed by the NodeInfo object, valid while its generation (bumped by the cache on every change) stays.
const memos = new WeakMap<NodeInfo, Memo>();

/**
 * `compute(info)`, remembered for `info` under `key` until the node or its pods change. Consecutive pods
 * of one workload ask the same questions of every node; only the node that took the last pod has changed
 * since, so a cycle costs one lookup per node instead of a walk over its pods. `key` must determine the
 * answer together with the node's contents. A NodeInfo without a generation is never remembered.
 */
export function memoized<T>(info: NodeInfo, key: string, compute: (info: NodeInfo) => T): T {
  const generation = info.generation;
  if (generation === undefined) return compute(info);
  let memo = memos.get(info);
  if (!memo || memo.generation !== generation || memo.answers.size >= MAX_ANSWERS_PER_NODE) {
    memo = { generation, answers: new Map() };
    memos.set(info, memo);
  }
  if (memo.answers.has(key)) return memo.answers.get(key) as T;
  const answer = compute(info);
  memo.answers.set(key, answer);
  return answer;
}
