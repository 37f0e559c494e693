import type { ContainerConfig, ContainerRuntime, PodSandboxConfig } from '@skiff/kernel';

export interface RecordingRuntime<T extends ContainerRuntime> {
  runtime: T;
  /** Every container config handed to createContainer, in order. */
  containers: ContainerConfig[];
  sandboxes: PodSandboxConfig[];
  /** The config of the last container created with this name. */
  config(name: string): ContainerConfig;
}

/** The runtime, recording the sandbox and container configs the kubelet hands it. */
export function recording<T extends ContainerRuntime>(runtime: T): RecordingRuntime<T> {
  const containers: ContainerConfig[] = [];
  const sandboxes: PodSandboxConfig[] = [];
  const recorded = new Proxy(runtime, {
    get(target, property) {
      if (property === 'createContainer')
        return (sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig) => {
          containers.push(structuredClone(config));
          return target.createContainer(sandboxId, config, sandboxConfig);
        };
      if (property === 'runPodSandbox')
        return (config: PodSandboxConfig) => {
          sandboxes.push(structuredClone(config));
          return target.runPodSandbox(config);
        };
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const config = (name: string) => {
    const found = containers.filter((c) => c.metadata.name === name).at(-1);
    if (!found) throw new Error(`no container ${name} was created`);
    return found;
  };
  return { runtime: recorded, containers, sandboxes, config };
}
