import type {
  ContainerConfig,
  ContainerRuntime,
  ContainerStatsInfo,
  ContainerStatusInfo,
  ExecSyncResult,
  ImageAuth,
  Logger,
  PodSandboxConfig,
  PodSandboxStatus,
  StreamRequest,
} from '@skiff/kernel';
import { type CriClient, isNotFound, type CriMessage, type RuntimeAnswers } from './cri-client.js';
import { fromCriContainer, fromCriContainerStats, fromCriSandbox, toCriContainerConfig, toCriSandboxConfig } from './convert.js';
import { RUNTIME_NAME } from './names.js';

/** How long a stats reading may take: it is taken again next period anyway. */
const STATS_TIMEOUT_MS = 10_000;

/** The network namespace path containerd made for a sandbox, from its verbose status. */
function netnsPathOf(info: Record<string, string> | undefined): string | undefined {
  if (!info?.info) return undefined;
  try {
    const parsed = JSON.parse(info.info) as { runtimeSpec?: { linux?: { namespaces?: { type: string; path?: string }[] } } };
    return parsed.runtimeSpec?.linux?.namespaces?.find((ns) => ns.type === 'network')?.path;
  } catch {
    return undefined;
  }
}

/**
 * The kernel's ContainerRuntime over containerd's CRI v1. Statuses of containers that have exited never
 * change, and a running container's start time neither, so lists reuse what an earlier status call said and
 * only ask containerd about containers that changed state.
 */
export class ContainerdRuntime implements ContainerRuntime {
  readonly name = RUNTIME_NAME;
  private readonly netns = new Map<string, string>();
  private readonly statuses = new Map<string, ContainerStatusInfo>();

  /**
   * @param ownsDaemon containerd was started for this runtime and stops with it (its shims too): pods end with it.
   */
  constructor(
    readonly client: CriClient,
    private readonly logger: Logger,
    private readonly onClose: () => Promise<void> = async () => undefined,
    readonly podsEndWithRuntime = false,
  ) {}

  async version() {
    const answer = await this.client.runtime('Version', { version: '0.1.0' });
    return {
      runtimeName: answer.runtime_name,
      runtimeVersion: answer.runtime_version,
      runtimeApiVersion: answer.runtime_api_version,
    };
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const answer = await this.client.runtime('RunPodSandbox', { config: toCriSandboxConfig(config) });
    return answer.pod_sandbox_id;
  }

  async stopPodSandbox(sandboxId: string): Promise<void> {
    await this.ignoringNotFound(this.client.runtime('StopPodSandbox', { pod_sandbox_id: sandboxId }));
  }

  async removePodSandbox(sandboxId: string): Promise<void> {
    await this.ignoringNotFound(this.client.runtime('RemovePodSandbox', { pod_sandbox_id: sandboxId }));
    this.netns.delete(sandboxId);
  }

  async podSandboxStatus(sandboxId: string): Promise<PodSandboxStatus | undefined> {
    let answer: RuntimeAnswers['PodSandboxStatus'];
    try {
      answer = await this.client.runtime('PodSandboxStatus', { pod_sandbox_id: sandboxId, verbose: true });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const netns = netnsPathOf(answer.info);
    if (netns) this.netns.set(sandboxId, netns);
    return fromCriSandbox(answer.status, netns);
  }

  async listPodSandbox(filter?: { labelSelector?: Record<string, string> }): Promise<PodSandboxStatus[]> {
    const answer = await this.client.runtime('ListPodSandbox', filter?.labelSelector ? { filter: { label_selector: filter.labelSelector } } : {});
    const items = answer.items ?? [];
    return Promise.all(
      items.map(async (item) => {
        const { id } = item;
        // A sandbox from before this process started: its namespace path is only in the verbose status.
        if (!this.netns.has(id) && item.state === 'SANDBOX_READY') await this.podSandboxStatus(id);
        return fromCriSandbox(item, this.netns.get(id));
      }),
    );
  }

  async createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const answer = await this.client.runtime('CreateContainer', {
      pod_sandbox_id: sandboxId,
      config: toCriContainerConfig(config),
      sandbox_config: toCriSandboxConfig(sandboxConfig),
    });
    return answer.container_id;
  }

  async startContainer(containerId: string): Promise<void> {
    await this.client.runtime('StartContainer', { container_id: containerId });
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    await this.ignoringNotFound(this.client.runtime('StopContainer', { container_id: containerId, timeout: timeoutSeconds }, (timeoutSeconds + 30) * 1000));
  }

  async removeContainer(containerId: string): Promise<void> {
    await this.ignoringNotFound(this.client.runtime('RemoveContainer', { container_id: containerId }));
    this.statuses.delete(containerId);
  }

  async containerStatus(containerId: string): Promise<ContainerStatusInfo | undefined> {
    let answer: RuntimeAnswers['ContainerStatus'];
    try {
      answer = await this.client.runtime('ContainerStatus', { container_id: containerId });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return fromCriContainer(answer.status);
  }

  async listContainers(filter?: { podSandboxId?: string }): Promise<ContainerStatusInfo[]> {
    const answer = await this.client.runtime('ListContainers', filter?.podSandboxId ? { filter: { pod_sandbox_id: filter.podSandboxId } } : {});
    const items = answer.containers ?? [];
    const seen = new Set<string>();
    const listed = await Promise.all(
      items.map(async (item) => {
        const { id } = item;
        seen.add(id);
        const known = this.statuses.get(id);
        if (known && known.state === item.state && item.state !== 'CONTAINER_CREATED') return known;
        const status = await this.containerStatus(id);
        if (!status) return undefined;
        const merged = { ...{}, ...status, podSandboxId: item.pod_sandbox_id };
        if (merged.state === 'CONTAINER_RUNNING' || merged.state === 'CONTAINER_EXITED') this.statuses.set(id, merged);
        return merged;
      }),
    );
    if (!filter?.podSandboxId) for (const id of this.statuses.keys()) if (!seen.has(id)) this.statuses.delete(id);
    return listed.filter((status): status is ContainerStatusInfo => status !== undefined);
  }

  /** CRI ListContainerStats: containerd reads each container's cgroup (v1 or v2) itself. */
  async listContainerStats(): Promise<ContainerStatsInfo[]> {
    const answer = await this.client.runtime('ListContainerStats', {}, STATS_TIMEOUT_MS);
    return (answer.stats ?? []).flatMap((item) => fromCriContainerStats(item) ?? []);
  }

  async pullImage(image: string, auth?: ImageAuth): Promise<string> {
    const request: CriMessage = { image: { image } };
    if (auth) {
      request.auth = {
        username: auth.username ?? '',
        password: auth.password ?? '',
        auth: auth.auth ?? '',
        server_address: auth.serverAddress ?? '',
        identity_token: auth.identityToken ?? '',
        registry_token: auth.registryToken ?? '',
      };
    }
    const answer = await this.client.image('PullImage', request);
    return answer.image_ref;
  }

  async imageStatus(image: string): Promise<{ id: string; repoTags: string[]; size: number } | undefined> {
    const answer = await this.client.image('ImageStatus', { image: { image } });
    const found = answer.image;
    if (!found || !found.id) return undefined;
    return { id: found.id, repoTags: found.repo_tags ?? [], size: Number(found.size ?? 0) };
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    const answer = await this.client.runtime('ExecSync', { container_id: containerId, cmd, timeout: timeoutSeconds }, (timeoutSeconds + 10) * 1000);
    return {
      stdout: Buffer.from(answer.stdout ?? []),
      stderr: Buffer.from(answer.stderr ?? []),
      exitCode: answer.exit_code ?? 0,
    };
  }

  async exec(request: StreamRequest): Promise<string> {
    const answer = await this.client.runtime('Exec', {
      container_id: request.containerId,
      cmd: request.cmd ?? [],
      tty: request.tty ?? false,
      stdin: request.stdin ?? false,
      stdout: request.stdout ?? false,
      stderr: request.stderr ?? false,
    });
    return answer.url;
  }

  async attach(request: StreamRequest): Promise<string> {
    const answer = await this.client.runtime('Attach', {
      container_id: request.containerId,
      tty: request.tty ?? false,
      stdin: request.stdin ?? false,
      stdout: request.stdout ?? false,
      stderr: request.stderr ?? false,
    });
    return answer.url;
  }

  async portForward(sandboxId: string, ports: number[]): Promise<string> {
    const answer = await this.client.runtime('PortForward', { pod_sandbox_id: sandboxId, port: ports });
    return answer.url;
  }

  async reopenContainerLog(containerId: string): Promise<void> {
    await this.client.runtime('ReopenContainerLog', { container_id: containerId });
  }

  async close(): Promise<void> {
    this.client.close();
    await this.onClose();
  }

  private async ignoringNotFound(call: Promise<unknown>): Promise<void> {
    try {
      await call;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.logger.debug({ err }, 'already gone');
    }
  }
}
