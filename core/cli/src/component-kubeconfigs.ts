import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SeparateComponent } from './components.js';

/** The user each component authenticates as (its client certificate's CN), as kubeadm's component kubeconfigs. */
export const COMPONENT_USERS: Readonly<Record<SeparateComponent, string>> = Object.freeze({
  'controller-manager': 'system:kube-controller-manager',
  scheduler: 'system:kube-scheduler',
});

const DAY_MS = 24 * 60 * 60 * 1000;

export function componentKubeconfigFile(dataDir: string, component: SeparateComponent): string {
  return join(dataDir, `${component}.kubeconfig`);
}

/**
 * Writes `<dataDir>/controller-manager.kubeconfig` and `<dataDir>/scheduler.kubeconfig`: `server` and a client
 * certificate from the cluster CA for the component's user. A file that already has this server, this CA and a
 * certificate of it valid for more than a day is kept. Returns the files.
 */
export async function writeComponentKubeconfigs(dataDir: string, server: string): Promise<string[]> {
  const { readClusterCa, issueClientCertificate } = await import('@skiff/apiserver');
  const { readKubeconfig, writeKubeconfig } = await import('@skiff/client');
  const ca = readClusterCa(dataDir);
  const files: string[] = [];
  for (const [component, user] of Object.entries(COMPONENT_USERS) as [SeparateComponent, string][]) {
    const file = componentKubeconfigFile(dataDir, component);
    files.push(file);
    const current = existsSync(file) ? readKubeconfig(file) : undefined;
    if (current?.server === server && current.caPem === ca.caPem && current.certPem && stillGood(current.certPem, ca.caPem, user)) continue;
    const { certPem, keyPem } = issueClientCertificate(ca, { user });
    writeKubeconfig(file, { server, caPem: ca.caPem, certPem, keyPem, userName: user });
  }
  return files;
}

function stillGood(certPem: string, caPem: string, user: string): boolean {
  try {
    const certificate = new X509Certificate(certPem);
    return (
      certificate.verify(new X509Certificate(caPem).publicKey) &&
      certificate.subject.split('\n').includes(`CN=${user}`) &&
      Date.parse(certificate.validTo) - Date.now() > DAY_MS
    );
  } catch {
    return false;
  }
}
