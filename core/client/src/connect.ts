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

/** A client for a kubeconfig context (the current context unless `context` names one). */
export function createClientFromKubeconfig(path: string, context?: string): KubeconfigClient {
  const { namespace, server, caPem, token, certPem, keyPem, insecureSkipTlsVerify } = readKubeconfig(path, context);
  const client = createClient(new HttpsTransport({ server, caPem, token, certPem, keyPem, insecureSkipTlsVerify }));
  return Object.assign(client, { namespace });
}
