import { ApiError, errorMessage, errors, isJsonObject, type Node, type Pod, type PodSpec } from '@skiff/api';
import type { NodeConnection, PodRef } from '@skiff/kernel';
import type { RestContext } from '../rest/context.js';
import { objectKey } from '../rest/keys.js';
import { readObject } from '../rest/read.js';

/** How the API server reaches a node's kubelet: in this process when it runs here, otherwise over HTTPS. */
export interface NodeConnectionLookup {
  /**
   * The connection of a kubelet running in this process (the fast path; from an API server worker thread, one in the
   * primary thread); undefined when none of that name runs here.
   */
  local(nodeName: string): NodeConnection | undefined | Promise<NodeConnection | undefined>;
  /** A connection to the node's kubelet at the address its Node reports; absent when the API server has no kubelet client. */
  remote?(node: Node): NodeConnection;
}

/** The annotation naming the container kubectl picks when none is given (kubectl logs, exec, attach, cp). */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** The pod the request names; 404 when there is none. */
export async function readPod(ctx: RestContext): Promise<Pod> {
  return (await readObject<Pod>(ctx)).object;
}

export function podRef(pod: Pod): PodRef {
  return { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' };
}

/**
 * The connection to the kubelet of the pod's node: the in-process one, else one over HTTPS to the address its Node
 * reports. 400 for a pod not yet scheduled, 404 when its Node does not exist (as kube-apiserver answers), 500 when
 * the kubelet cannot be reached.
 */
export async function nodeConnectionOf(ctx: RestContext, pod: Pod, nodes: NodeConnectionLookup): Promise<NodeConnection> {
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw errors.badRequest(`pod ${pod.metadata.name} does not have a host assigned`);
  const local = await nodes.local(nodeName);
  if (local) return local;
  if (!nodes.remote) throw errors.internal(`error dialing backend: no kubelet of node "${nodeName}" is connected to this API server`);
  return nodes.remote(await readNode(ctx, nodeName));
}

async function readNode(ctx: RestContext, name: string): Promise<Node> {
  const definition = ctx.core.registry.get('', 'nodes');
  const stored = definition ? await ctx.core.store.get(objectKey(definition, '', name)) : undefined;
  if (!stored) throw errors.notFound('nodes', '', name);
  return stored.object as Node;
}

/** Every container name of the pod, as kube-apiserver lists them: init containers, containers, ephemeral containers. */
export function containerNames(pod: Pod): string[] {
  const spec: PodSpec | undefined = pod.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])].map((container) => container.name);
}

/**
 * The container a request is about, checked as kube-apiserver does: a named container must exist; without a
 * name, the pod's only container, or the one its default-container annotation names.
 */
export function chooseContainer(pod: Pod, requested: string | undefined): string {
  const names = containerNames(pod);
  const podName = pod.metadata.name;
  if (requested) {
    if (!names.includes(requested)) throw errors.badRequest(`container ${requested} is not valid for pod ${podName}`);
    return requested;
  }
  const containers = pod.spec?.containers ?? [];
  if (containers.length === 1) return containers[0]!.name;
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated && names.includes(annotated)) return annotated;
  if (containers.length === 0) throw errors.badRequest(`a container name must be specified for pod ${podName}`);
  throw errors.badRequest(`a container name must be specified for pod ${podName}, choose one of: [${names.join(' ')}]`);
}

/**
 * A failure of the kubelet side (the node connection): API errors pass as they are, errors that say which
 * Status they are (`toStatus()`, as the kubelet's coded errors do) become that Status, anything else a 500.
 */
export function nodeFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (typeof err === 'object' && err !== null && 'toStatus' in err && typeof err.toStatus === 'function') {
    const status: unknown = err.toStatus();
    if (isJsonObject(status) && typeof status.code === 'number') return ApiError.fromStatus(status, status.code);
  }
  return errors.internal(errorMessage(err));
}
