// A NodeConnection for tests: logs from a function the test sets, streaming URLs on the stand-in runtime; and
// the serving certificate of a stand-in kubelet reached over HTTPS.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin, type ContainerLogOptions, type NodeConnection, type NodeConnections, type PodRef, type StreamRequest } from '@skiff/kernel';
import { ensurePki } from '../pki.js';
import type { TestRuntime } from './test-runtime.js';

export type StreamKind = 'exec' | 'attach' | 'portforward';

export class FakeNode implements NodeConnection {
  readonly logCalls: { pod: PodRef; container: string; options: ContainerLogOptions }[] = [];
  readonly streamCalls: { kind: string; pod: PodRef; container: string; request: Omit<StreamRequest, 'containerId'> }[] = [];
  readonly portForwardCalls: { pod: PodRef; ports: number[] }[] = [];
  /** The log of a container; may throw as a kubelet would. */
  logs: (signal: AbortSignal, container: string, pod: PodRef) => AsyncIterable<Uint8Array> = async function* () {
    yield Buffer.from('line 1\nline 2\n');
  };
  /** The runtime token for a stream request; a test may program the runtime for it here. */
  token: (kind: StreamKind, request: Omit<StreamRequest, 'containerId'> | undefined) => string = () => 'unset';

  constructor(private readonly runtime: () => TestRuntime) {}

  async containerLogs(pod: PodRef, container: string, options: ContainerLogOptions, signal: AbortSignal) {
    this.logCalls.push({ pod, container, options });
    return this.logs(signal, container, pod);
  }

  async streamURL(kind: 'exec' | 'attach', pod: PodRef, container: string, request: Omit<StreamRequest, 'containerId'>) {
    this.streamCalls.push({ kind, pod, container, request });
    return this.runtime().url(kind, this.token(kind, request));
  }

  async portForwardURL(pod: PodRef, ports: number[]) {
    this.portForwardCalls.push({ pod, ports });
    return this.runtime().url('portforward', this.token('portforward', undefined));
  }
}

/** Provides `nodeConnections` holding these nodes, as the kubelet plugin does. */
export function nodeConnectionsPlugin(nodes: Record<string, NodeConnection>) {
  const connections = new Map(Object.entries(nodes));
  const registry: NodeConnections = {
    register: (name, connection) => {
      connections.set(name, connection);
      return () => connections.delete(name);
    },
    get: (name) => connections.get(name),
  };
  return definePlugin({
    name: 'test-node-connections',
    version: '0.1.0',
    kernel: '^0.1.0',
    provides: ['nodeConnections'],
    apply(kernel) {
      kernel.hooks.components.tap('test-node-connections', () => kernel.provide('nodeConnections', registry));
    },
  });
}

/** A serving certificate for `host` from the CA in `caDataDir/pki` (copied into `dir/pki`), or from a new CA. */
export function servingPki(dir: string, host: string, caDataDir?: string) {
  if (caDataDir) {
    mkdirSync(join(dir, 'pki'), { recursive: true });
    for (const file of ['ca.crt', 'ca.key']) copyFileSync(join(caDataDir, 'pki', file), join(dir, 'pki', file));
  }
  return ensurePki(dir, host);
}
