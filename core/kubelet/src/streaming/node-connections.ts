import type { NodeConnection, NodeConnections } from '@skiff/kernel';

/**
 * The kubelets of this process by node name, for the API server's pod logs, exec, attach and port-forward.
 * A kubelet registers when it has started and unregisters when it stops; unregistering a connection that
 * has since been replaced (the node restarted under the same name) leaves the new one in place.
 */
export class NodeConnectionRegistry implements NodeConnections {
  private readonly connections = new Map<string, NodeConnection>();

  register(nodeName: string, connection: NodeConnection): () => void {
    this.connections.set(nodeName, connection);
    return () => {
      if (this.connections.get(nodeName) === connection) this.connections.delete(nodeName);
    };
  }

  get(nodeName: string): NodeConnection | undefined {
    return this.connections.get(nodeName);
  }
}
