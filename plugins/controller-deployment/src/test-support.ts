import { RESOURCES, type Pod } from '@skiff/api';
import { SharedInformerFactory } from '@skiff/client';
import type { ApiClient, Logger } from '@skiff/kernel';

/** Pods with this label are never reported ready, like pods whose containers never start. */
export const NEVER_READY_LABEL = 'skiff.test/never-ready';

/**
 * Plays the kubelet for tests that need available pods: every pod that appears is reported Running and
 * Ready (as of now), except those labelled NEVER_READY_LABEL. Stops when `signal` aborts.
 */
export function reportPodsReady(client: ApiClient, logger: Logger, signal: AbortSignal): void {
  const factory = new SharedInformerFactory(client, { resyncMs: 0, logger });
  factory.informer<Pod>(RESOURCES.pods).addHandlers({
    add: (pod) => {
      if (pod.metadata.labels?.[NEVER_READY_LABEL] || pod.metadata.deletionTimestamp) return;
      if (pod.status?.conditions?.some((condition) => condition.type === 'Ready')) return;
      const lastTransitionTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const status = { phase: 'Running' as const, conditions: [{ type: 'Ready', status: 'True' as const, lastTransitionTime }] };
      client
        .updateStatus<Pod>(RESOURCES.pods, { ...structuredClone(pod), status })
        .catch((err) => logger.debug({ err }, 'pod gone before it was reported ready'));
    },
  });
  factory.start(signal);
}
