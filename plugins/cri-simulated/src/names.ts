import { packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-cri-simulated';

/** The name nodes pick this runtime by (kubelet option `runtime`), and the containerID scheme. */
export const RUNTIME_NAME = 'simulated';
/** The runtime's version: its package's. */
export const RUNTIME_VERSION = packageInfo(new URL('../package.json', import.meta.url)).version;

/** The runtime's own folder in the node's data folder (containers' logs when the kubelet's log folder cannot be written). */
export const RUNTIME_DATA_FOLDER = 'cri-simulated';

/**
 * A container label the Skiff kubelet sets to `init` on init containers. The simulated runtime has no
 * processes, so, like kwok, it lets init containers run to completion (exit 0) as soon as they start;
 * every other container runs until it is stopped.
 */
export const CONTAINER_ROLE_LABEL = 'skiff.io/container-role';

/**
 * A container label the Skiff kubelet sets to the pod's `restartPolicy`. Containers of pods that run to
 * completion (`Never`, `OnFailure`) exit by themselves after the runtime's `runMs`.
 */
export const RESTART_POLICY_LABEL = 'skiff.io/pod-restart-policy';

/** Pod annotation: how long (milliseconds) the pod's containers run before they exit, whatever its restart policy. */
export const SIMULATE_RUN_MS_ANNOTATION = 'skiff.io/simulate-run-ms';

/** Pod annotation: the exit code of the pod's containers when they exit by themselves (default 0). */
export const SIMULATE_EXIT_CODE_ANNOTATION = 'skiff.io/simulate-exit-code';

/** Pod annotation: the exit code of commands run in the pod's containers (exec probes and hooks; default 0). */
export const SIMULATE_EXEC_EXIT_CODE_ANNOTATION = 'skiff.io/simulate-exec-exit-code';

/** Pod annotation: the CPU each of the pod's running containers uses, a quantity ("250m"; default 1m, at most its limit). */
export const SIMULATE_CPU_ANNOTATION = 'skiff.io/simulate-cpu';

/** Pod annotation: the memory working set of each of the pod's running containers ("64Mi"; default 4Mi, at most its limit). */
export const SIMULATE_MEMORY_ANNOTATION = 'skiff.io/simulate-memory';
