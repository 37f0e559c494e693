import type { UserInfo } from '@skiff/api';
import type { ApiHandler } from '@skiff/kernel';
import { createClient, type SkiffClient } from './client.js';
import { readKubeconfig } from './kubeconfig.js';
import { HttpsTransport } from './transport/https.js';
import { LoopbackTransport } from './transport/loopback.js';

/** An in-process client acting as `user`: every request still passes authentication, authorization and admission. */
export function createLoopbackClient(handler: ApiHandler, user: UserInfo): SkiffClient {
  return createClient(new LoopbackTransport(handler, handler.issueLoopbackToken(user)));
}

export interface KubeconfigClient extends SkiffClient {
  /** The context's default namespace. */
  readonly namespace: string;
}

export interface KubeconfigClientOptions {
  /**
   * API servers of the kubeconfig's cluster to use instead of its `server`, in order: a connection failure moves on to
   * the next (see HttpsTransport). The kubeconfig still gives the CA and the credentials.
   */
  servers?: readonly string[];
}

/** A client for a kubeconfig context (the current context unless `context` names one). */
export function createClientFromKubeconfig(path: string, context?: string, options: KubeconfigClientOptions = {}): KubeconfigClient {
  const { namespace, server, caPem, token, certPem, keyPem, insecureSkipTlsVerify } = readKubeconfig(path, context);
  const client = createClient(new HttpsTransport({ server, servers: options.servers, caPem, token, certPem, keyPem, insecureSkipTlsVerify }));
  return Object.assign(client, { namespace });
}
