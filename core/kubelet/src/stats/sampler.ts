import type { ContainerRuntime, ContainerStatsInfo, Logger, NodeStatsInfo } from '@skiff/kernel';
import { errorMessage } from '@skiff/api';
import { CRI_LABELS } from '../names.js';
import type { ContainerSamples, SamplePair, UsageSnapshot } from './usage.js';

export interface UsageSamplerOptions {
  runtime: ContainerRuntime;
  /** How often the runtime's figures are read (upstream's housekeeping interval: 10 s). */
  periodMs: number;
  logger: Logger;
  /** The machine's figures, for a runtime that does not give the node's own (absent: the node shows no usage). */
  hostStats?: () => Promise<NodeStatsInfo>;
}

/**
 * Reads the runtime's cumulative container figures (and the node's) every period and keeps the last two readings of
 * each running container, so usage is always a rate over the last window. Containers the runtime no longer lists are
 * forgotten; a failed reading is logged and the previous ones stay.
 */
export class UsageSampler {
  private containers = new Map<string, ContainerSamples>();
  private node: SamplePair<NodeStatsInfo> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failing = false;

  constructor(private readonly options: UsageSamplerOptions) {}

  /** Takes a reading now and then every period, until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.timer || signal.aborted) return;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.options.periodMs);
    this.timer.unref();
    signal.addEventListener('abort', () => clearInterval(this.timer), { once: true });
  }

  /** Takes one reading (a reading still under way is waited for instead of starting a second). */
  sample(): Promise<void> {
    this.running ??= this.read().finally(() => (this.running = undefined));
    return this.running;
  }

  /** The readings held now. */
  snapshot(): UsageSnapshot {
    return { ...{}, ...(this.node ? { node: this.node } : {}), containers: [...this.containers.values()], failed: this.failing };
  }

  private async read(): Promise<void> {
    const { runtime, hostStats } = this.options;
    try {
      const [stats, node] = await Promise.all([
        runtime.listContainerStats?.() ?? Promise.resolve(undefined),
        runtime.nodeStats?.() ?? hostStats?.() ?? Promise.resolve(undefined),
      ]);
      if (stats) this.takeContainers(stats);
      if (node) this.node = { ...{}, ...(this.node ? { older: this.node.newer } : {}), newer: node };
      if (this.failing) this.options.logger.info({}, 'reading resource usage works again');
      this.failing = false;
    } catch (err) {
      // Said once per run of failures: a runtime that cannot give stats would otherwise log every period.
      if (!this.failing) this.options.logger.warn({ err: errorMessage(err) }, 'reading resource usage failed');
      this.failing = true;
    }
  }

  private takeContainers(stats: ContainerStatsInfo[]): void {
    const next = new Map<string, ContainerSamples>();
    for (const reading of stats) {
      const labels = reading.labels ?? {};
      const namespace = labels[CRI_LABELS.POD_NAMESPACE];
      const name = labels[CRI_LABELS.POD_NAME];
      const uid = labels[CRI_LABELS.POD_UID];
      // Containers the kubelet did not make (no pod labels) are not any pod's.
      if (!namespace || !name || !uid) continue;
      const held = this.containers.get(reading.id);
      const older = held && held.newer.timestampMs < reading.timestampMs ? held.newer : held?.older;
      next.set(reading.id, {
        pod: { namespace, name, uid },
        container: labels[CRI_LABELS.CONTAINER_NAME] ?? reading.metadata.name,
        ...(older ? { older } : {}),
        newer: reading,
      });
    }
    this.containers = next;
  }
}
