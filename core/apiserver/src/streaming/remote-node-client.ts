import { Agent } from 'node:https';
import type { Node } from '@skiff/api';
import { issueClientCertificate, type ClusterCa, type IssuedCertificate } from '../pki.js';
import { kubeletEndpoint, RemoteNodeConnection, type KubeletClientTls } from './remote-node.js';

/** Who the API server is to kubelets, as kubeadm issues its apiserver-kubelet-client certificate. */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';
export const KUBELET_CLIENT_GROUPS: readonly string[] = Object.freeze(['system:masters']);

/** A client certificate this close to its expiry is issued again before the next use. */
const RENEW_BEFORE_MS = 24 * 60 * 60 * 1000;

/**
 * The API server's client for kubelets that run outside its process: connections over HTTPS at each Node's
 * address, presenting a client certificate the API server issues itself from the cluster CA (on first use, and
 * again when it nears expiry) and verifying kubelets' serving certificates against that CA. Connections share
 * one keep-alive agent, so log reads reuse TLS sessions.
 */
export class KubeletClient {
  private readonly agent = new Agent({ keepAlive: true });
  private issued: { certificate: IssuedCertificate; tls: KubeletClientTls } | undefined;

  /** `clusterCa` is read when the first kubelet is dialled: a server that never needs one issues nothing. */
  constructor(private readonly clusterCa: () => Pick<ClusterCa, 'caPem' | 'caKeyPem'>) {}

  /** A connection to the node's kubelet; throws a 500 Status when the Node reports no address to reach it at. */
  connection(node: Node): RemoteNodeConnection {
    return new RemoteNodeConnection(kubeletEndpoint(node), this.credentials(), this.agent);
  }

  /** The client certificate and the CA kubelets are verified against. */
  credentials(): KubeletClientTls {
    if (this.issued && this.issued.certificate.notAfter.getTime() - Date.now() > RENEW_BEFORE_MS) return this.issued.tls;
    const ca = this.clusterCa();
    const certificate = issueClientCertificate(ca, { user: KUBELET_CLIENT_USER, groups: KUBELET_CLIENT_GROUPS });
    this.issued = { certificate, tls: { ca: ca.caPem, cert: certificate.certPem, key: certificate.keyPem } };
    return this.issued.tls;
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent.destroy();
  }
}
