import {
  gauge,
  seriesCounter,
  seriesHistogram,
  exponentialBuckets,
  type ContainerRuntime,
  type CounterSeries,
  type HistogramSeries,
  type Registry,
} from '@skiff/kernel';

/**
 * The runtime's methods that count as runtime operations, with the `operation_type` upstream's kubelet gives each CRI
 * call. Other methods (stats the sampler polls, `close`) are not counted.
 */
export const RUNTIME_OPERATION_TYPES: Readonly<Record<string, string>> = {
  version: 'version',
  runPodSandbox: 'run_podsandbox',
  stopPodSandbox: 'stop_podsandbox',
  removePodSandbox: 'remove_podsandbox',
  podSandboxStatus: 'podsandbox_status',
  listPodSandbox: 'list_podsandbox',
  createContainer: 'create_container',
  startContainer: 'start_container',
  stopContainer: 'stop_container',
  removeContainer: 'remove_container',
  containerStatus: 'container_status',
  listContainers: 'list_containers',
  pullImage: 'pull_image',
  imageStatus: 'image_status',
  execSync: 'exec_sync',
  exec: 'exec',
  attach: 'attach',
  portForward: 'port_forward',
  listContainerStats: 'list_container_stats',
  reopenContainerLog: 'reopen_container_log',
};

/** Upstream's runtime operation buckets: 5 ms × 2.5ⁿ, n = 0 … 13. */
const OPERATION_BUCKETS = exponentialBuckets(0.005, 2.5, 14);
/** Upstream's pod start buckets, in seconds. */
export const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

/** One runtime operation's series: its count, its errors and its durations. */
export interface RuntimeOperationSeries {
  total: CounterSeries;
  errors: CounterSeries;
  duration: HistogramSeries;
}

/** How long a scrape waits for one runtime's sandbox and container lists. */
const LIST_DEADLINE_MS = 2_000;

/** The runtimes whose pods and containers a registry's gauges count at scrape time. */
const runtimesOf = new WeakMap<Registry, Set<ContainerRuntime>>();

/** Running pods (ready sandboxes) and containers by state, of one runtime; undefined when it does not answer in time. */
export async function countRunning(runtime: ContainerRuntime): Promise<{ pods: number; containers: Record<string, number> } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LIST_DEADLINE_MS);
    timer.unref();
  });
  const lists = Promise.all([runtime.listPodSandbox(), runtime.listContainers()]).catch(() => undefined);
  const answer = await Promise.race([lists, late]).finally(() => clearTimeout(timer));
  if (!answer) return undefined;
  const [sandboxes, containers] = answer;
  const states: Record<string, number> = { created: 0, running: 0, exited: 0, unknown: 0 };
  for (const container of containers) {
    const state = container.state.replace(/^CONTAINER_/, '').toLowerCase();
    states[state] = (states[state] ?? 0) + 1;
  }
  return { pods: sandboxes.filter((sandbox) => sandbox.state === 'SANDBOX_READY').length, containers: states };
}

function runningGauges(registry: Registry): Set<ContainerRuntime> {
  let runtimes = runtimesOf.get(registry);
  if (runtimes) return runtimes;
  const known = (runtimes = new Set<ContainerRuntime>());
  runtimesOf.set(registry, known);
  // Both gauges read the same lists while a read is in flight (a scrape starts every collect at once): one scrape
  // lists each runtime once.
  let reading: Promise<{ pods: number; containers: Record<string, number> }> | undefined;
  const read = () =>
    (reading ??= (async () => {
      const total = { pods: 0, containers: { created: 0, running: 0, exited: 0, unknown: 0 } as Record<string, number> };
      for (const counted of await Promise.all([...known].map(countRunning))) {
        if (!counted) continue;
        total.pods += counted.pods;
        for (const [state, count] of Object.entries(counted.containers)) total.containers[state] = (total.containers[state] ?? 0) + count;
      }
      return total;
    })().finally(() => (reading = undefined)));
  gauge(registry, {
    name: 'kubelet_running_pods',
    help: 'Pods whose sandbox is ready on the kubelets of this process.',
    async collect() {
      this.set((await read()).pods);
    },
  });
  gauge(registry, {
    name: 'kubelet_running_containers',
    help: 'Containers on the kubelets of this process, by state.',
    labelNames: ['container_state'],
    async collect() {
      for (const [state, count] of Object.entries((await read()).containers)) this.set({ container_state: state }, count);
    },
  });
  return known;
}

/**
 * The kubelet's metrics, with upstream's names and labels: kubelet_runtime_operations_total,
 * kubelet_runtime_operations_errors_total and kubelet_runtime_operations_duration_seconds by `operation_type`,
 * kubelet_pod_start_duration_seconds, and the gauges kubelet_running_pods and kubelet_running_containers read from the
 * runtimes at scrape time. Every kubelet of a process shares its registry's series: the figures are the process's.
 */
export class KubeletMetrics {
  private readonly operations = new Map<string, RuntimeOperationSeries>();
  private readonly podStart: HistogramSeries;

  constructor(private readonly registry: Registry) {
    this.podStart = seriesHistogram(registry, {
      name: 'kubelet_pod_start_duration_seconds',
      help: 'Seconds from a kubelet first seeing a pod to its status reading Running.',
      labelNames: [],
      buckets: POD_START_BUCKETS,
    }).series({});
  }

  /** The series of a runtime method, or undefined when the method is not a counted operation. */
  operation(method: string): RuntimeOperationSeries | undefined {
    const type = RUNTIME_OPERATION_TYPES[method];
    if (type === undefined) return undefined;
    let series = this.operations.get(type);
    if (series) return series;
    const labelNames = ['operation_type'];
    const labels = { operation_type: type };
    series = {
      total: seriesCounter(this.registry, {
        name: 'kubelet_runtime_operations_total',
        help: 'Container runtime (CRI) calls, by operation.',
        labelNames,
      }).series(labels),
      errors: seriesCounter(this.registry, {
        name: 'kubelet_runtime_operations_errors_total',
        help: 'Container runtime (CRI) calls that failed, by operation.',
        labelNames,
      }).series(labels),
      duration: seriesHistogram(this.registry, {
        name: 'kubelet_runtime_operations_duration_seconds',
        help: 'Seconds a container runtime (CRI) call took, by operation.',
        labelNames,
        buckets: OPERATION_BUCKETS,
      }).series(labels),
    };
    this.operations.set(type, series);
    return series;
  }

  /** A pod began to run `seconds` after the kubelet first saw it. */
  podStarted(seconds: number): void {
    this.podStart.observe(seconds);
  }

  /** Counts `runtime`'s (the runtime itself, not the counting wrapper) pods and containers at every scrape; returns the function that stops. */
  countRunning(runtime: ContainerRuntime): () => void {
    const runtimes = runningGauges(this.registry);
    runtimes.add(runtime);
    return () => runtimes.delete(runtime);
  }
}
