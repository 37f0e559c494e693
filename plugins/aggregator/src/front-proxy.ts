import { resolve } from 'node:path';
import { issueClientCertificate, readClusterCa } from '@skiff/apiserver';
import { isApiError, RESOURCES, type ConfigMap } from '@skiff/api';
import type { ApiClient, Kernel } from '@skiff/kernel';
import { FRONT_PROXY_USER } from './names.js';

export interface FrontProxyIdentity {
  /** The CA that signed the client certificate: aggregated API servers trust it for the front-proxy headers. */
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** The ConfigMap in kube-system aggregated API servers read to authenticate the front proxy. */
export const AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication';

/** A client certificate for the front proxy, issued by the cluster CA in the data dir for every start. */
export function frontProxyIdentity(kernel: Kernel): FrontProxyIdentity {
  const ca = readClusterCa(resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir));
  const issued = issueClientCertificate(ca, { user: FRONT_PROXY_USER });
  return { caPem: ca.caPem, certPem: issued.certPem, keyPem: issued.keyPem };
}

/**
 * The requestheader keys of kube-system/extension-apiserver-authentication, as kube-apiserver publishes them:
 * which CA signs the front proxy's certificate, which names it may carry, and which headers hold the user.
 */
export function requestHeaderData(identity: FrontProxyIdentity): Record<string, string> {
  return {
    'requestheader-client-ca-file': identity.caPem,
    'requestheader-allowed-names': JSON.stringify([FRONT_PROXY_USER]),
    'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
    'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
    'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
  };
}

/** Writes the requestheader keys (and client-ca-file when absent) into the ConfigMap, creating it when missing. */
export async function publishRequestHeaderConfig(client: ApiClient, identity: FrontProxyIdentity): Promise<void> {
  const type = RESOURCES.configmaps;
  const data = requestHeaderData(identity);
  let existing: ConfigMap | undefined;
  try {
    existing = await client.get<ConfigMap>(type, AUTHENTICATION_CONFIGMAP, 'kube-system');
  } catch (err) {
    if (!isApiError(err, 'NotFound')) throw err;
  }
  if (!existing) {
    const object: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: AUTHENTICATION_CONFIGMAP, namespace: 'kube-system' },
      data: { 'client-ca-file': identity.caPem, ...data },
    };
    await client.create(type, object, 'kube-system');
    return;
  }
  const current = existing.data ?? {};
  if (Object.entries(data).every(([key, value]) => current[key] === value) && current['client-ca-file']) return;
  await client.update(type, { ...existing, data: { 'client-ca-file': identity.caPem, ...current, ...data } });
}
