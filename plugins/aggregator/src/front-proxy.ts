import { resolve } from 'node:path';
import { issueClientCertificate, publishAuthenticationConfig, readClusterCa } from '@skiff/apiserver';
import type { ApiClient, Kernel } from '@skiff/kernel';
import { FRONT_PROXY_USER } from './names.js';

export interface FrontProxyIdentity {
  /** The CA that signed the client certificate: aggregated API servers trust it for the front-proxy headers. */
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A client certificate for the front proxy, issued by the cluster CA in the data dir for every start. */
export function frontProxyIdentity(kernel: Kernel): FrontProxyIdentity {
  const ca = readClusterCa(resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir));
  const issued = issueClientCertificate(ca, { user: FRONT_PROXY_USER });
  return { caPem: ca.caPem, certPem: issued.certPem, keyPem: issued.keyPem };
}

/**
 * The requestheader keys of kube-system/extension-apiserver-authentication, as kube-apiserver publishes them
 * (`client-ca-file` is the client-certificate authenticator's to publish):
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

/** Publishes the requestheader keys through the API server's one writer of the ConfigMap (other authenticators' keys stay). */
export async function publishRequestHeaderConfig(client: ApiClient, identity: FrontProxyIdentity): Promise<void> {
  await publishAuthenticationConfig(client, requestHeaderData(identity));
}
