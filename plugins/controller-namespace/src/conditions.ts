import type { NamespaceCondition } from '@skiff/api';
import type { ContentReport } from './content.js';

/**
 * The conditions that tell `kubectl describe namespace` why a deletion is not done yet, with Kubernetes'
 * types, reasons and message shapes (tools parse them): failed deletions, objects remaining, and the
 * finalizers holding them.
 */
export function deletionConditions(report: ContentReport, now: string): NamespaceCondition[] {
  const remaining = [...report.remaining].map(([resource, count]) => `${resource} has ${count} resource instances`).sort();
  const finalizers = [...report.finalizers].map(([finalizer, count]) => `${finalizer} in ${count} resource instances`).sort();
  const condition = (type: string, failing: boolean, reason: string, message: string): NamespaceCondition => ({
    type,
    status: failing ? 'True' : 'False',
    reason,
    message,
    lastTransitionTime: now,
  });
  return [
    report.failures.length > 0
      ? condition(
          'NamespaceDeletionContentFailure',
          true,
          'ContentDeletionFailed',
          `Failed to delete all resource types, ${report.failures.length} remaining: ${report.failures.join(', ')}`,
        )
      : condition('NamespaceDeletionContentFailure', false, 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'),
    remaining.length > 0
      ? condition('NamespaceContentRemaining', true, 'SomeResourcesRemain', `Some resources are remaining: ${remaining.join(', ')}`)
      : condition('NamespaceContentRemaining', false, 'ContentRemoved', 'All content successfully removed'),
    finalizers.length > 0
      ? condition(
          'NamespaceFinalizersRemaining',
          true,
          'SomeFinalizersRemain',
          `Some content in the namespace has finalizers remaining: ${finalizers.join(', ')}`,
        )
      : condition('NamespaceFinalizersRemaining', false, 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'),
  ];
}

/**
 * `current` with `next` merged in by type. A condition whose status did not change keeps its
 * lastTransitionTime; `changed` says whether anything differs, so an unchanged status is not written.
 */
export function mergeConditions(
  current: readonly NamespaceCondition[],
  next: readonly NamespaceCondition[],
): { conditions: NamespaceCondition[]; changed: boolean } {
  const conditions = [...current];
  let changed = false;
  for (const condition of next) {
    const index = conditions.findIndex((existing) => existing.type === condition.type);
    const existing = index >= 0 ? conditions[index] : undefined;
    if (existing && existing.status === condition.status && existing.reason === condition.reason && existing.message === condition.message) continue;
    const merged = existing?.status === condition.status ? { ...{}, ...condition, lastTransitionTime: existing.lastTransitionTime } : condition;
    if (index >= 0) conditions[index] = merged;
    else conditions.push(merged);
    changed = true;
  }
  return { conditions, changed };
}
