import { request as httpsRequest } from 'node:https';
import type { ControlPlane } from '@skiff/testing';

export interface HttpsAnswer {
  status: number;
  text: string;
}

function adminToken(cluster: ControlPlane): string {
  return cluster.kernel.resolve('apiHandler').issueLoopbackToken({ username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
}

/** A request over the cluster's real HTTPS listener as its admin, as kubectl sends it. */
export function adminRequest(cluster: ControlPlane, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<HttpsAnswer> {
  const { url, caPem } = cluster.kernel.resolve('apiServerInfo');
  const token = adminToken(cluster);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${url}${path}`,
      {
        method,
        ca: caPem,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload ? { 'content-type': contentType, 'content-length': String(Buffer.byteLength(payload)) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** GET pods/<name>/log with the query (`previous=true`, `tailLines=1`…). */
export function podLog(cluster: ControlPlane, namespace: string, name: string, query = ''): Promise<HttpsAnswer> {
  return adminRequest(cluster, 'GET', `/api/v1/namespaces/${namespace}/pods/${name}/log${query ? `?${query}` : ''}`);
}

/** A kubeconfig for kubectl as the cluster's admin (a loopback token over the real HTTPS listener). */
export function adminKubeconfig(cluster: ControlPlane): string {
  const { url, caPem } = cluster.kernel.resolve('apiServerInfo');
  const token = adminToken(cluster);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'admin', namespace: 'default' } }],
    'current-context': 'test',
  });
}
