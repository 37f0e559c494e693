import { ApiError, errors, isApiError, RESOURCES as KINDS, type KubeList, type Node, type Pod, type UserInfo } from '@skiff/api';
import type { ApiClient, ApiRequest, ApiResponse, ListOptions } from '@skiff/kernel';
import type { NodeUsageCache } from './node-usage.js';
import { apiResourceList, nodeMetrics, podMetrics, type NodeMetrics, type PodMetrics } from './objects.js';
import { METRICS_GROUP, METRICS_VERSION } from './names.js';

export interface MetricsApiOptions {
  /** Reads Nodes and Pods (the plugin's own identity: the caller was authorized for the metrics already). */
  client: () => ApiClient;
  usage: NodeUsageCache;
  /** The window reported for figures that do not say theirs. */
  fallbackWindowSeconds: number;
}

const PREFIX = `/apis/${METRICS_GROUP}/${METRICS_VERSION}`;

/** What a path under the group/version names: a resource, maybe a namespace, maybe one object. */
interface Target {
  resource: 'nodes' | 'pods';
  namespace?: string;
  name?: string;
}

function parseTarget(path: string): Target | 'root' | undefined {
  const rest = path.slice(PREFIX.length).replace(/\/+$/, '');
  if (rest === '') return 'root';
  const parts = rest.split('/').slice(1).map(decodeURIComponent);
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    const [, namespace, resource, name, ...more] = parts;
    if (resource !== 'pods' || more.length) return undefined;
    return { resource, namespace, ...(name !== undefined ? { name } : {}) };
  }
  const [resource, name, ...more] = parts;
  if ((resource !== 'nodes' && resource !== 'pods') || more.length || (resource === 'pods' && name !== undefined)) return undefined;
  return { resource, ...(name !== undefined ? { name } : {}) };
}

function json(body: unknown, status = 200): ApiResponse {
  return { status, headers: { 'content-type': 'application/json' }, body };
}

function statusOf(err: ApiError): ApiResponse {
  return json(err.toStatus(), err.status);
}

/** `metadata.name=x` (or `==`, or `!=`) is the one field selector upstream's metrics-server understands. */
function nameSelector(fieldSelector: string | undefined): { equals?: string; differs?: string } {
  if (!fieldSelector) return {};
  const result: { equals?: string; differs?: string } = {};
  for (const term of fieldSelector.split(',').filter(Boolean)) {
    const match = /^\s*metadata\.name\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    if (!match) throw errors.badRequest(`field label not supported: ${term.split(/!=|==|=/)[0]!.trim()}`);
    if (match[1] === '!=') result.differs = match[2];
    else result.equals = match[2];
  }
  return result;
}

function listOptions(query: Record<string, string | undefined>): ListOptions {
  return {
    ...{},
    ...(query.labelSelector ? { labelSelector: query.labelSelector } : {}),
    ...(query.fieldSelector ? { fieldSelector: query.fieldSelector } : {}),
  };
}

/**
 * metrics.k8s.io/v1beta1 as upstream's metrics-server serves it, answered from the kubelets' usage: NodeMetrics and
 * PodMetrics, get and list, labelSelector and fieldSelector (metadata.name). Objects without figures are left out of
 * lists and are NotFound on a get.
 */
export class MetricsApi {
  constructor(private readonly options: MetricsApiOptions) {}

  async serve(request: ApiRequest, _user: UserInfo): Promise<ApiResponse> {
    try {
      if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed(request.method);
      const target = parseTarget(request.path);
      if (target === 'root') return json(apiResourceList());
      if (!target) throw errors.pathNotFound(request.path);
      if (request.query.watch === 'true' || request.query.watch === '1') throw methodNotAllowed('watch');
      if (target.resource === 'nodes') return json(target.name !== undefined ? await this.node(target.name) : await this.nodes(request.query));
      return json(target.name !== undefined ? await this.pod(target.namespace!, target.name) : await this.pods(target.namespace, request.query));
    } catch (err) {
      if (err instanceof ApiError) return statusOf(err);
      throw err;
    }
  }

  private async node(name: string): Promise<NodeMetrics> {
    const node = await this.read(() => this.options.client().get<Node>(KINDS.nodes, name));
    const metrics = node && (await this.nodeMetricsOf([node]))[0];
    if (!metrics) throw errors.notFound('nodemetrics', METRICS_GROUP, name);
    return metrics;
  }

  private async nodes(query: Record<string, string | undefined>): Promise<{ kind: string; apiVersion: string; metadata: object; items: NodeMetrics[] }> {
    nameSelector(query.fieldSelector);
    const list = await this.options.client().list<Node>(KINDS.nodes, undefined, listOptions(query));
    this.options.usage.retain(list.items.map((node) => node.metadata.name ?? ''));
    return { kind: 'NodeMetricsList', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, metadata: {}, items: await this.nodeMetricsOf(list.items) };
  }

  private async pod(namespace: string, name: string): Promise<PodMetrics> {
    const pod = await this.read(() => this.options.client().get<Pod>(KINDS.pods, name, namespace));
    const metrics = pod && (await this.podMetricsOf([pod]))[0];
    if (!metrics) throw errors.notFound('podmetrics', METRICS_GROUP, name);
    return metrics;
  }

  private async pods(namespace: string | undefined, query: Record<string, string | undefined>) {
    nameSelector(query.fieldSelector);
    const list: KubeList<Pod> = await this.options.client().list<Pod>(KINDS.pods, namespace, listOptions(query));
    return { kind: 'PodMetricsList', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, metadata: {}, items: await this.podMetricsOf(list.items) };
  }

  /** The object, or undefined when it does not exist. */
  private async read<T>(get: () => Promise<T>): Promise<T | undefined> {
    try {
      return await get();
    } catch (err) {
      if (isApiError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  private async nodeMetricsOf(nodes: Node[]): Promise<NodeMetrics[]> {
    const { usage, fallbackWindowSeconds } = this.options;
    const read = await Promise.all(nodes.map(async (node) => ({ node, figures: (await usage.get(node.metadata.name ?? ''))?.node })));
    return read.flatMap(({ node, figures }) => (figures ? [nodeMetrics(node, figures, fallbackWindowSeconds)] : []));
  }

  /** Metrics of running pods whose every container has figures, their nodes each read once. */
  private async podMetricsOf(pods: Pod[]): Promise<PodMetrics[]> {
    const { usage, fallbackWindowSeconds } = this.options;
    const running = pods.filter((pod) => pod.spec?.nodeName && pod.status?.phase === 'Running' && !pod.metadata.deletionTimestamp);
    const nodeNames = [...new Set(running.map((pod) => pod.spec!.nodeName!))];
    const byNode = new Map(await Promise.all(nodeNames.map(async (name) => [name, await usage.get(name)] as const)));
    return running.flatMap((pod) => {
      const figures = byNode.get(pod.spec!.nodeName!)?.pods.find((entry) => entry.uid === pod.metadata.uid);
      const metrics = figures && podMetrics(pod, figures, fallbackWindowSeconds);
      return metrics ? [metrics] : [];
    });
  }
}

function methodNotAllowed(verb: string): ApiError {
  return errors.methodNotAllowed(`the server does not allow this method on the requested resource (${verb})`);
}
