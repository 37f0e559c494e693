import { errorMessage } from '@skiff/api';
import type { Logger, NodeConnection, NodeResourceUsage } from '@skiff/kernel';

export interface NodeUsageCacheOptions {
  /** The connection to a node's kubelet; undefined when there is no such node. */
  connect(nodeName: string): Promise<NodeConnection | undefined>;
  /** How long a reading answers before the kubelet is asked again. */
  resolutionMs: number;
  timeoutMs: number;
  logger: Logger;
}

interface Entry {
  at: number;
  usage: Promise<NodeResourceUsage | undefined>;
}

/**
 * Each node's usage as its kubelet last reported it, read at most once per resolution (requests arriving meanwhile
 * share the reading under way). A node that cannot be read counts as having no figures until the next reading.
 */
export class NodeUsageCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: NodeUsageCacheOptions) {}

  get(nodeName: string): Promise<NodeResourceUsage | undefined> {
    const now = Date.now();
    const held = this.entries.get(nodeName);
    if (held && now - held.at < this.options.resolutionMs) return held.usage;
    const usage = this.read(nodeName);
    this.entries.set(nodeName, { at: now, usage });
    return usage;
  }

  /** Forgets nodes not in `names` (deleted ones). */
  retain(names: Iterable<string>): void {
    const keep = new Set(names);
    for (const name of this.entries.keys()) if (!keep.has(name)) this.entries.delete(name);
  }

  private async read(nodeName: string): Promise<NodeResourceUsage | undefined> {
    try {
      const connection = await this.options.connect(nodeName);
      if (!connection?.resourceUsage) return undefined;
      return await connection.resourceUsage(AbortSignal.timeout(this.options.timeoutMs));
    } catch (err) {
      this.options.logger.warn({ node: nodeName, err: errorMessage(err) }, "reading a node's resource usage failed");
      return undefined;
    }
  }
}
