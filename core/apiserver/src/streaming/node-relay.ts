import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { ApiError, errorMessage, type ApiErrorCode, type ApiErrorDetails } from '@skiff/api';
import type { ContainerLogOptions, NodeConnection, NodeConnections, PodRef, StreamRequest } from '@skiff/kernel';

/**
 * Kubelets that run in the primary thread (the dev and local presets' nodes), reached from an API server worker
 * thread: the worker asks the primary over a MessagePort, and a container's log comes back chunk by chunk on a port of
 * its own (cancelled when the request ends). Exec, attach and port-forward answer URLs, which any thread can dial.
 */

type Call =
  | { id: number; op: 'has'; node: string }
  | { id: number; op: 'streamURL'; node: string; args: Parameters<NodeConnection['streamURL']> }
  | { id: number; op: 'portForwardURL'; node: string; args: Parameters<NodeConnection['portForwardURL']> }
  | { id: number; op: 'logs'; node: string; args: [PodRef, string, ContainerLogOptions]; stream: MessagePort };

/** A call as the worker makes it (the id is added when it is sent). */
type CallBody = Call extends infer C ? (C extends unknown ? Omit<C, 'id'> : never) : never;

interface Failure {
  message: string;
  api?: { code: ApiErrorCode; details?: ApiErrorDetails };
}

type Answer = { id: number; value: unknown } | { id: number; failure: Failure };

type StreamMessage = { chunk: Uint8Array } | { end: true } | { failure: Failure };

function failureOf(err: unknown): Failure {
  return err instanceof ApiError ? { message: err.message, api: { code: err.code, details: err.details } } : { message: errorMessage(err) };
}

function errorOf(failure: Failure): Error {
  return failure.api ? new ApiError(failure.api.code, failure.message, failure.api.details) : new Error(failure.message);
}

/** The primary's side: answers a worker's calls with the kubelets registered in this thread. */
export function serveNodeRelay(port: MessagePort, connections: () => NodeConnections | undefined): void {
  port.on('message', (call: Call) => void answer(call));
  async function answer(call: Call): Promise<void> {
    try {
      const connection = connections()?.get(call.node);
      if (call.op === 'has') return port.postMessage({ id: call.id, value: connection !== undefined } satisfies Answer);
      if (!connection) throw new Error(`no kubelet of node "${call.node}" runs in the primary thread`);
      if (call.op === 'streamURL') return port.postMessage({ id: call.id, value: await connection.streamURL(...call.args) } satisfies Answer);
      if (call.op === 'portForwardURL') return port.postMessage({ id: call.id, value: await connection.portForwardURL(...call.args) } satisfies Answer);
      await relayLogs(connection, call.args, call.stream);
      port.postMessage({ id: call.id, value: true } satisfies Answer);
    } catch (err) {
      port.postMessage({ id: call.id, failure: failureOf(err) } satisfies Answer);
    }
  }
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
  private next = 0;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (answer: Answer) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      // Waiting for answers keeps the thread alive; nothing else on this port does.
      if (this.pending.size === 0) this.port.unref();
      if ('failure' in answer) waiting.reject(errorOf(answer.failure));
      else waiting.resolve(answer.value);
    });
    port.unref();
  }

  /** The connection of a kubelet of the primary thread; undefined when none of that name runs there. */
  async get(node: string): Promise<NodeConnection | undefined> {
    return (await this.call({ op: 'has', node })) ? this.connection(node) : undefined;
  }

  private connection(node: string): NodeConnection {
    return {
      streamURL: (...args: [kind: 'exec' | 'attach', pod: PodRef, container: string, request: Omit<StreamRequest, 'containerId'>]) =>
        this.call({ op: 'streamURL', node, args }) as Promise<string>,
      portForwardURL: (pod: PodRef, ports: number[]) => this.call({ op: 'portForwardURL', node, args: [pod, ports] }) as Promise<string>,
      containerLogs: (pod, container, options, signal) => this.logs(node, [pod, container, options], signal),
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
      await this.call({ op: 'logs', node, args, stream: theirs }, [theirs]);
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

  private call(call: CallBody, transfer: MessagePort[] = []): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.port.ref();
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ ...call, id }, transfer);
    });
  }
}
