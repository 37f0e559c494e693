import { RESOURCES, type Node } from '@skiff/api';
import { sleep } from '@skiff/client';
import type { ApiClient } from '@skiff/kernel';
import { KubeletError } from '../errors.js';

const POLL_MS = 250;

/**
 * Waits for the node IPAM controller to give the node its pod range (`spec.podCIDR`), as upstream's kubelet
 * does when it has no range of its own; a cluster without that controller fails the node's start with one line.
 */
export async function waitForPodCIDR(client: ApiClient, nodeName: string, timeoutMs: number, signal: AbortSignal): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const podCIDR = (await client.get<Node>(RESOURCES.nodes, nodeName)).spec?.podCIDR;
    if (podCIDR) return podCIDR;
    if (Date.now() >= deadline) throw new KubeletError('SKIFF_ERR_KUBELET_NO_POD_CIDR', { node: nodeName, seconds: Math.round(timeoutMs / 1000) });
    await sleep(POLL_MS, signal);
  }
}
