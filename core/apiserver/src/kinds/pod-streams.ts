import type { KindHandlers } from '../rest/handlers.js';
import { podLog } from '../streaming/pod-log.js';
import { podStream } from '../streaming/pod-stream.js';
import type { NodeConnectionLookup } from '../streaming/pod-target.js';
import { pods } from './core/index.js';

/**
 * The pod subresources served by the pod's node (logs, exec, attach, port-forward), reached through the
 * kubelets' node connections. exec, attach and portforward answer GET (WebSocket) and POST (SPDY) alike.
 */
export function registerPodStreamHandlers(handlers: KindHandlers, nodes: NodeConnectionLookup): void {
  const pod = { group: '', resource: pods.resource };
  handlers.register({ ...{}, ...pod, subresource: 'log', verb: 'get' }, (ctx) => podLog(ctx, nodes));
  for (const kind of ['exec', 'attach', 'portforward'] as const) {
    for (const verb of ['get', 'create']) handlers.register({ ...{}, ...pod, subresource: kind, verb }, (ctx) => podStream(ctx, kind, nodes));
  }
}
