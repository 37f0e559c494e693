export const PLUGIN_NAME = '@skiff/plugin-cri-simulated';

/** The name nodes pick this runtime by (kubelet option `runtime`), and the containerID scheme. */
export const RUNTIME_NAME = 'simulated';
export const RUNTIME_VERSION = '0.1.0';

/**
 * A container label the Skiff kubelet sets to `init` on init containers. The simulated runtime has no
 * processes, so, like kwok, it lets init containers run to completion (exit 0) as soon as they start;
 * every other container runs until it is stopped.
 */
export const CONTAINER_ROLE_LABEL = 'skiff.io/container-role';
