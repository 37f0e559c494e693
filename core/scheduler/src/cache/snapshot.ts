import type { NodeInfo, SchedulerSnapshot } from '@skiff/kernel';

/** An image name as the scheduler compares them: without `docker.io/` and `library/`, with `:latest` when untagged. */
export function normalizedImageName(name: string): string {
  let image = name;
  if (image.startsWith('docker.io/')) image = image.slice('docker.io/'.length);
  if (image.startsWith('library/')) image = image.slice('library/'.length);
  const lastSlash = image.lastIndexOf('/');
  if (!image.includes('@') && !image.slice(lastSlash + 1).includes(':')) image += ':latest';
  return image;
}

/** The normalized names of every image a node reports (status.images), once each. */
export function nodeImageNames(info: NodeInfo): Set<string> {
  const names = new Set<string>();
  for (const entry of info.node.status?.images ?? []) for (const name of entry.names ?? []) names.add(normalizedImageName(name));
  return names;
}

/**
 * A snapshot over a fixed list of NodeInfos (tests, benchmarks, preemption's what-ifs). The lists of
 * nodes with affinity pods and the image counts are computed on first use, once per snapshot.
 */
export class NodeListSnapshot implements SchedulerSnapshot {
  private byName: Map<string, NodeInfo> | undefined;
  private withAffinity: NodeInfo[] | undefined;
  private withAntiAffinity: NodeInfo[] | undefined;
  private images: Map<string, number> | undefined;

  constructor(readonly nodes: readonly NodeInfo[]) {}

  get(name: string): NodeInfo | undefined {
    if (!this.byName) {
      this.byName = new Map();
      for (const info of this.nodes) this.byName.set(info.node.metadata.name!, info);
    }
    return this.byName.get(name);
  }

  get nodesWithAffinityPods(): readonly NodeInfo[] {
    return (this.withAffinity ??= this.nodes.filter((info) => (info.podsWithAffinity?.length ?? 0) > 0));
  }

  get nodesWithRequiredAntiAffinityPods(): readonly NodeInfo[] {
    return (this.withAntiAffinity ??= this.nodes.filter((info) => (info.podsWithRequiredAntiAffinity?.length ?? 0) > 0));
  }

  imageNodeCount(image: string): number {
    if (!this.images) {
      this.images = new Map();
      for (const info of this.nodes) for (const name of nodeImageNames(info)) this.images.set(name, (this.images.get(name) ?? 0) + 1);
    }
    return this.images.get(normalizedImageName(image)) ?? 0;
  }
}
