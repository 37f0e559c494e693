import type { Container, Pod } from '@skiff/api';
import type { ContainerConfig, PodSandboxConfig } from '@skiff/kernel';
import { CRI_LABELS } from '../names.js';

/** The labels that tie runtime objects to a pod. */
export function podLabels(pod: Pod): Record<string, string> {
  return {
    [CRI_LABELS.POD_NAME]: pod.metadata.name!,
    [CRI_LABELS.POD_NAMESPACE]: pod.metadata.namespace!,
    [CRI_LABELS.POD_UID]: pod.metadata.uid!,
  };
}

export function sandboxConfig(pod: Pod, attempt: number): PodSandboxConfig {
  const { name, namespace, uid } = pod.metadata as { name: string; namespace: string; uid: string };
  const portMappings = pod.spec.containers
    .flatMap((container) => container.ports ?? [])
    .filter((port) => port.hostPort)
    .map((port) => ({ protocol: port.protocol ?? 'TCP', containerPort: port.containerPort, hostPort: port.hostPort }));
  return {
    metadata: { name, namespace, uid, attempt },
    hostname: (pod.spec.hostname as string | undefined) ?? name,
    logDirectory: `/var/log/pods/${namespace}_${name}_${uid}`,
    labels: { ...pod.metadata.labels, ...podLabels(pod) },
    annotations: { ...pod.metadata.annotations },
    ...(portMappings.length ? { portMappings } : {}),
  };
}

export function containerConfig(pod: Pod, container: Container, attempt: number, role: 'init' | 'regular'): ContainerConfig {
  const { name, namespace, uid } = pod.metadata;
  return {
    metadata: { name: container.name, attempt },
    image: { image: container.image ?? '' },
    ...(container.command ? { command: container.command } : {}),
    ...(container.args ? { args: container.args } : {}),
    envs: (container.env ?? []).filter((env) => env.value !== undefined).map((env) => ({ key: env.name, value: env.value! })),
    labels: {
      ...podLabels(pod),
      [CRI_LABELS.CONTAINER_NAME]: container.name,
      [CRI_LABELS.CONTAINER_ROLE]: role,
      [CRI_LABELS.RESTART_POLICY]: pod.spec.restartPolicy ?? 'Always',
    },
    annotations: { 'io.kubernetes.container.restartCount': String(attempt) },
    logPath: `/var/log/pods/${namespace}_${name}_${uid}/${container.name}/${attempt}.log`,
  };
}
