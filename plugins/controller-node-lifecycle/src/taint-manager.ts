import { isApiError, RESOURCES, type Node, type Pod, type PodCondition, type Taint } from '@skiff/api';
import { objectKey, splitObjectKey } from '@skiff/client';
import { kubeTime } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { DISRUPTION_TARGET, EVENT_REASON, POD_NODE_NAME_INDEX, WRITE_ATTEMPTS } from './names.js';
import { evictionDelayMs, noExecuteTaints } from './taints.js';

/** The pause between attempts at marking and deleting a pod. */
const RETRY_PAUSE_MS = 10;

/** A pod's eviction: pending while `timer` is set; once fired it stays recorded, so the pod is evicted once. */
interface Eviction {
  timer: NodeJS.Timeout | undefined;
}

/**
 * Evicts pods from nodes with NoExecute taints (upstream's NoExecuteTaintManager). A pod that does not
 * tolerate every NoExecute taint of its node is deleted at once; one that tolerates them all for a while
 * (`tolerationSeconds`) is deleted when the shortest such while, counted from when it was first found on the
 * tainted node, has passed — unless the taints go, its tolerations change or it is deleted first; one that
 * tolerates them forever stays. Each eviction is announced with a TaintManagerEviction event and marked with
 * the pod's DisruptionTarget condition before the delete.
 */
export class TaintEvictionManager {
  /** Each node's NoExecute taints, for nodes that have some. */
  private readonly taintedNodes = new Map<string, Taint[]>();
  private readonly evictions = new Map<string, Eviction>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly nodes: Informer<Node>,
    private readonly pods: Informer<Pod>,
  ) {
    nodes.addHandlers({
      add: (node) => this.nodeChanged(node.metadata.name!),
      update: (oldNode, node) => {
        if (!sameTaints(noExecuteTaints(oldNode), noExecuteTaints(node))) this.nodeChanged(node.metadata.name!);
      },
      delete: (node) => this.nodeChanged(node.metadata.name!),
    });
    pods.addHandlers({
      add: (pod) => this.podChanged(objectKey(pod)),
      update: (oldPod, pod) => {
        const moved = oldPod.spec.nodeName !== pod.spec.nodeName;
        if (moved || JSON.stringify(oldPod.spec.tolerations ?? []) !== JSON.stringify(pod.spec.tolerations ?? [])) this.podChanged(objectKey(pod));
      },
      delete: (pod) => this.cancel(objectKey(pod)),
    });
    ctx.signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  private nodeChanged(nodeName: string): void {
    const node = this.nodes.get(nodeName);
    const taints = noExecuteTaints(node);
    if (taints.length === 0) this.taintedNodes.delete(nodeName);
    else this.taintedNodes.set(nodeName, taints);
    const pods = this.pods.byIndex(POD_NODE_NAME_INDEX, nodeName);
    const nowMs = Date.now();
    for (const pod of pods) {
      if (taints.length === 0) this.cancel(objectKey(pod));
      else this.judgePod(pod, taints, nowMs);
    }
  }

  private podChanged(key: string): void {
    const pod = this.pods.get(key);
    if (!pod) return this.cancel(key);
    const taints = pod.spec.nodeName ? this.taintedNodes.get(pod.spec.nodeName) : undefined;
    if (!taints) return;
    this.judgePod(pod, taints, Date.now());
  }

  private judgePod(pod: Pod, taints: Taint[], nowMs: number): void {
    // A pod already on its way out is left to finish; deleting it again would change nothing.
    if (pod.metadata.deletionTimestamp) return;
    const key = objectKey(pod);
    const delayMs = evictionDelayMs(taints, pod.spec.tolerations ?? []);
    if (delayMs === Infinity) return this.cancel(key);
    if (delayMs === 0) {
      this.cancel(key);
      return this.schedule(key, nowMs);
    }
    // A pod already waiting keeps the time it was first given.
    if (this.evictions.has(key)) return;
    this.schedule(key, nowMs + delayMs);
  }

  private schedule(key: string, fireMs: number): void {
    if (this.evictions.has(key) || this.ctx.signal.aborted) return;
    const eviction: Eviction = { timer: undefined };
    eviction.timer = setTimeout(
      () => {
        eviction.timer = undefined;
        this.evict(key).catch((err: unknown) => {
          this.ctx.logger.warn({ err, pod: key }, 'taint eviction failed');
          if (this.evictions.get(key) === eviction) this.evictions.delete(key);
        });
      },
      Math.max(0, fireMs - Date.now()),
    );
    this.evictions.set(key, eviction);
  }

  private cancel(key: string): void {
    const eviction = this.evictions.get(key);
    if (!eviction) return;
    this.evictions.delete(key);
    if (eviction.timer === undefined) return;
    clearTimeout(eviction.timer);
    this.recordEvent(key, `Cancelling deletion of Pod ${key}`);
  }

  private async evict(key: string): Promise<void> {
    this.ctx.logger.info({ pod: key }, 'deleting pod from a node with a NoExecute taint it does not tolerate');
    this.recordEvent(key, `Marking for deletion Pod ${key}`);
    const { namespace, name } = splitObjectKey(key);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.markDisruptionTarget(name, namespace!);
        await this.ctx.client.delete(RESOURCES.pods, name, namespace);
        return;
      } catch (err) {
        if (isApiError(err, 'NotFound')) return;
        if (attempt >= WRITE_ATTEMPTS || this.ctx.signal.aborted) throw err;
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }

  private async markDisruptionTarget(name: string, namespace: string): Promise<void> {
    const pod = await this.ctx.client.get<Pod>(RESOURCES.pods, name, namespace);
    const conditions = pod.status?.conditions ?? [];
    const existing = conditions.find((c) => c.type === DISRUPTION_TARGET.TYPE);
    if (existing?.status === 'True' && existing.reason === DISRUPTION_TARGET.REASON && existing.message === DISRUPTION_TARGET.MESSAGE) return;
    const marked: PodCondition = {
      type: DISRUPTION_TARGET.TYPE,
      status: 'True',
      reason: DISRUPTION_TARGET.REASON,
      message: DISRUPTION_TARGET.MESSAGE,
      lastTransitionTime: existing?.status === 'True' ? existing.lastTransitionTime : kubeTime(Date.now()),
    };
    const status = { ...{}, ...pod.status, conditions: [...conditions.filter((c) => c !== existing), marked] };
    await this.ctx.client.updateStatus<Pod>(RESOURCES.pods, { ...{}, ...pod, status });
  }

  private recordEvent(key: string, message: string): void {
    const { namespace, name } = splitObjectKey(key);
    const uid = this.pods.get(key)?.metadata.uid;
    this.ctx.recorder.event(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ...(uid ? { uid } : {}) } },
      'Normal',
      EVENT_REASON.TAINT_MANAGER_EVICTION,
      message,
    );
  }

  private stop(): void {
    for (const eviction of this.evictions.values()) clearTimeout(eviction.timer);
    this.evictions.clear();
  }
}

function sameTaints(a: Taint[], b: Taint[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
