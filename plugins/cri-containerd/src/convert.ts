// Between the kernel's CRI shape (camelCase, milliseconds) and CRI v1's own messages (snake_case, nanoseconds).
import type { ContainerConfig, ContainerStatsInfo, ContainerStatusInfo, NamespaceOptions, PodSandboxConfig, PodSandboxStatus } from '@skiff/kernel';
import type { CriContainerStats, CriContainerStatus, CriMessage, CriSandbox } from './cri-client.js';

type Obj = Record<string, unknown>;

function defined(value: Obj): Obj {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

/** The fields left undefined dropped, in place: statuses leave absent fields out. */
function withoutUndefined<T extends object>(value: T): T {
  for (const [key, field] of Object.entries(value)) if (field === undefined) Reflect.deleteProperty(value, key);
  return value;
}

function namespaceOptions(options: NamespaceOptions | undefined, pidDefault: string): Obj {
  return { network: options?.network ?? 'POD', pid: options?.pid ?? pidDefault, ipc: options?.ipc ?? 'POD' };
}

const int64 = (value: number | undefined) => (value === undefined ? undefined : { value });

export function toCriSandboxConfig(config: PodSandboxConfig): CriMessage {
  const security = config.linux?.securityContext;
  return defined({
    metadata: config.metadata,
    hostname: config.hostname,
    log_directory: config.logDirectory,
    dns_config: config.dnsConfig
      ? defined({ servers: config.dnsConfig.servers, searches: config.dnsConfig.searches, options: config.dnsConfig.options })
      : undefined,
    port_mappings: config.portMappings?.map((port) =>
      defined({ protocol: port.protocol ?? 'TCP', container_port: port.containerPort, host_port: port.hostPort, host_ip: port.hostIp }),
    ),
    labels: config.labels,
    annotations: config.annotations,
    linux: defined({
      cgroup_parent: config.linux?.cgroupParent,
      sysctls: config.linux?.sysctls,
      security_context: defined({
        namespace_options: namespaceOptions(security?.namespaceOptions, 'POD'),
        privileged: security?.privileged,
        run_as_user: int64(security?.runAsUser),
        supplemental_groups: security?.supplementalGroups,
      }),
    }),
  });
}

export function toCriContainerConfig(config: ContainerConfig): CriMessage {
  const security = config.linux?.securityContext;
  const resources = config.linux?.resources;
  return defined({
    metadata: config.metadata,
    image: { image: config.image.image },
    command: config.command,
    args: config.args,
    working_dir: config.workingDir,
    // KeyValue.value is `bytes` in CRI (same wire format as the string older runtimes read): raw UTF-8.
    envs: config.envs?.map((env) => ({ key: env.key, value: Buffer.from(env.value, 'utf8') })),
    mounts: config.mounts?.map((mount) =>
      defined({ container_path: mount.containerPath, host_path: mount.hostPath, readonly: mount.readonly, propagation: mount.propagation }),
    ),
    labels: config.labels,
    annotations: config.annotations,
    log_path: config.logPath,
    stdin: config.stdin,
    stdin_once: config.stdinOnce,
    tty: config.tty,
    linux: defined({
      resources: resources
        ? defined({
            cpu_period: resources.cpuPeriod,
            cpu_quota: resources.cpuQuota,
            cpu_shares: resources.cpuShares,
            memory_limit_in_bytes: resources.memoryLimitInBytes,
            oom_score_adj: resources.oomScoreAdj,
          })
        : undefined,
      security_context: defined({
        // Each container gets its own PID namespace unless the pod shares one (CRI's default would be the pod's).
        namespace_options: namespaceOptions(security?.namespaceOptions, 'CONTAINER'),
        privileged: security?.privileged,
        run_as_user: int64(security?.runAsUser),
        run_as_group: int64(security?.runAsGroup),
        supplemental_groups: security?.supplementalGroups,
        readonly_rootfs: security?.readonlyRootfs,
        no_new_privs: security?.noNewPrivs,
        capabilities: security?.capabilities
          ? { add_capabilities: security.capabilities.addCapabilities ?? [], drop_capabilities: security.capabilities.dropCapabilities ?? [] }
          : undefined,
      }),
    }),
  });
}

const ms = (nanos: unknown) => (typeof nanos === 'number' && nanos > 0 ? Math.floor(nanos / 1e6) : undefined);

export function fromCriSandbox(item: CriSandbox, netnsPath?: string): PodSandboxStatus {
  const { network } = item;
  return {
    id: item.id,
    metadata: item.metadata,
    state: item.state,
    createdAt: ms(item.created_at) ?? 0,
    ...(netnsPath ? { netnsPath } : {}),
    ...(network?.ip ? { network: { ip: network.ip, additionalIps: (network.additional_ips ?? []).map((a) => a.ip) } } : {}),
    labels: item.labels,
  };
}

export function fromCriContainer(item: CriContainerStatus): ContainerStatusInfo {
  const exited = item.state === 'CONTAINER_EXITED';
  return withoutUndefined({
    id: item.id,
    podSandboxId: item.pod_sandbox_id ?? '',
    metadata: item.metadata,
    state: item.state,
    createdAt: ms(item.created_at) ?? 0,
    startedAt: ms(item.started_at),
    finishedAt: ms(item.finished_at),
    exitCode: exited ? (item.exit_code ?? 0) : undefined,
    image: { image: item.image?.image ?? '' },
    imageRef: item.image_ref ?? '',
    reason: item.reason || undefined,
    message: item.message || undefined,
    labels: item.labels,
    annotations: item.annotations,
    logPath: item.log_path || undefined,
  });
}

/**
 * A container's figures from ListContainerStats in the kernel's terms; undefined for an entry without attributes or
 * CPU time (a container whose task has gone: containerd answers it with empty figures).
 */
export function fromCriContainerStats(item: CriContainerStats): ContainerStatsInfo | undefined {
  const { attributes, cpu, memory } = item;
  const cpuTime = cpu?.usage_core_nano_seconds?.value;
  if (!attributes?.id || !cpu || cpuTime === undefined || !cpu.timestamp) return undefined;
  const stats: ContainerStatsInfo = {
    id: attributes.id,
    metadata: { name: attributes.metadata?.name ?? '', attempt: attributes.metadata?.attempt ?? 0 },
    labels: { ...attributes.labels },
    timestampMs: cpu.timestamp / 1e6,
    cpuCoreNanoSeconds: cpuTime,
  };
  const workingSet = memory?.working_set_bytes?.value;
  if (workingSet !== undefined) stats.memoryWorkingSetBytes = workingSet;
  const usage = memory?.usage_bytes?.value;
  if (usage !== undefined) stats.memoryUsageBytes = usage;
  const rss = memory?.rss_bytes?.value;
  if (rss !== undefined) stats.memoryRssBytes = rss;
  return stats;
}
