import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { ApiError, errorMessage, type ApiErrorCode, type ApiErrorDetails } from '@skiff/api';
import {
  answerCalls,
  PortCalls,
  type ContainerLogOptions,
  type NodeConnection,
  type NodeConnections,
  type NodeResourceUsage,
  type PodRef,
  type StreamRequest,
} from '@skiff/kernel';

/**
 * Kubelets that run in the primary thread (the dev and local presets' nodes), reached from an API server worker
 * thread: the worker asks the primary over a MessagePort, and a container's log comes back chunk by chunk on a port of
 * its own (cancelled when the request ends). Exec, attach and port-forward answer URLs, which any thread can dial; resource
 * usage (metrics.k8s.io) is one call and answer.
 */

type Call =
  | { op: 'has'; node: string }
  | { op: 'streamURL'; node: string; args: Parameters<NodeConnection['streamURL']> }
  | { op: 'portForwardURL'; node: string; args: Parameters<NodeConnection['portForwardURL']> }
  | { op: 'resourceUsage'; node: string }
  | { op: 'logs'; node: string; args: [PodRef, string, ContainerLogOptions]; stream: MessagePort };

interface Failure {
  message: string;
  api?: { code: ApiErrorCode; details?: ApiErrorDetails };
}

type StreamMessage = { chunk: Uint8Array } | { end: true } | { failure: Failure };

function failureOf(err: unknown): Failure {
  return err instanceof ApiError ? { message: err.message, api: { code: err.code, details: err.details } } : { message: errorMessage(err) };
}

function errorOf(failure: Failure): Error {
  return failure.api ? new ApiError(failure.api.code, failure.message, failure.api.details) : new Error(failure.message);
}

/** The primary's side: answers a worker's calls with the kubelets registered in this thread. */
export function serveNodeRelay(port: MessagePort, connections: () => NodeConnections | undefined): void {
  answerCalls<Call, Failure>(
    port,
    async (call) => {
      const connection = connections()?.get(call.node);
      if (call.op === 'has') return connection !== undefined;
      if (!connection) throw new Error(`no kubelet of node "${call.node}" runs in the primary thread`);
      if (call.op === 'streamURL') return connection.streamURL(...call.args);
      if (call.op === 'portForwardURL') return connection.portForwardURL(...call.args);
      if (call.op === 'resourceUsage') {
        if (!connection.resourceUsage) throw new Error(`the kubelet of node "${call.node}" reports no resource usage`);
        return connection.resourceUsage();
      }
      await relayLogs(connection, call.args, call.stream);
      return true;
    },
    failureOf,
  );
}

/** Opens the log (its errors answer the call), then sends its chunks on `stream` until it ends or the worker cancels. */
async function relayLogs(connection: NodeConnection, [pod, container, options]: [PodRef, string, ContainerLogOptions], stream: MessagePort): Promise<void> {
  const controller = new AbortController();
  stream.on('message', () => controller.abort());
  stream.on('close', () => controller.abort());
  const chunks = await connection.containerLogs(pod, container, options, controller.signal);
  void (async () => {
    try {
      for await (const chunk of chunks) {
        const copy = chunk.slice();
        stream.postMessage({ chunk: copy } satisfies StreamMessage, [copy.buffer]);
      }
      stream.postMessage({ end: true } satisfies StreamMessage);
    } catch (err) {
      if (!controller.signal.aborted) stream.postMessage({ failure: failureOf(err) } satisfies StreamMessage);
    } finally {
      stream.close();
    }
  })();
}

/** A worker's side: the primary thread's kubelets, as connections of this thread. */
export class PrimaryNodes {
  private readonly calls: PortCalls<Failure>;

  constructor(port: MessagePort) {
    this.calls = new PortCalls(port, errorOf);
  }

  /** The connection of a kubelet of the primary thread; undefined when none of that name runs there. */
  async get(node: string): Promise<NodeConnection | undefined> {
    return (await this.calls.call({ op: 'has', node } satisfies Call)) ? this.connection(node) : undefined;
  }

  private connection(node: string): NodeConnection {
    return {
      streamURL: (...args: [kind: 'exec' | 'attach', pod: PodRef, container: string, request: Omit<StreamRequest, 'containerId'>]) =>
        this.calls.call({ op: 'streamURL', node, args } satisfies Call) as Promise<string>,
      portForwardURL: (pod: PodRef, ports: number[]) => this.calls.call({ op: 'portForwardURL', node, args: [pod, ports] } satisfies Call) as Promise<string>,
      containerLogs: (pod, container, options, signal) => this.logs(node, [pod, container, options], signal),
      resourceUsage: () => this.calls.call({ op: 'resourceUsage', node } satisfies Call) as Promise<NodeResourceUsage>,
    };
  }

  private async logs(node: string, args: [PodRef, string, ContainerLogOptions], signal: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const { port1: mine, port2: theirs } = new MessageChannel();
    const queue: StreamMessage[] = [];
    let wake: (() => void) | undefined;
    mine.on('message', (message: StreamMessage) => {
      queue.push(message);
      wake?.();
    });
    const cancel = () => {
      mine.postMessage('cancel');
      mine.close();
      wake?.();
    };
    signal.addEventListener('abort', cancel, { once: true });
    try {
      await this.calls.call({ op: 'logs', node, args, stream: theirs } satisfies Call, [theirs]);
    } catch (err) {
      signal.removeEventListener('abort', cancel);
      mine.close();
      throw err;
    }
    return (async function* () {
      try {
        for (;;) {
          const message = queue.shift();
          if (!message) {
            if (signal.aborted) return;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
            continue;
          }
          if ('chunk' in message) yield message.chunk;
          else if ('end' in message) return;
          else throw errorOf(message.failure);
        }
      } finally {
        signal.removeEventListener('abort', cancel);
        mine.close();
      }
    })();
  }
}
