import type { ApiRequest, Logger } from '@skiff/kernel';
import type { ApiServer } from './server.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const APISERVER_USER = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

/**
 * Creates the system namespaces that are missing, through the server's own pipeline (as the
 * system:apiserver user with a loopback token) so admission and audit see them like any other create.
 */
export async function bootstrapNamespaces(server: ApiServer, logger: Logger): Promise<void> {
  const headers = { authorization: `Bearer ${server.issueLoopbackToken(APISERVER_USER)}`, 'content-type': 'application/json' };
  for (const name of SYSTEM_NAMESPACES) {
    const get: ApiRequest = { method: 'GET', path: `/api/v1/namespaces/${name}`, query: {}, headers };
    if ((await server.handle(get)).status === 200) continue;
    const created = await server.handle({
      method: 'POST',
      path: '/api/v1/namespaces',
      query: {},
      headers,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
    if (created.status !== 201 && created.status !== 409)
      logger.warn({ namespace: name, status: created.status, message: (created.body as { message?: string })?.message }, 'could not create a system namespace');
  }
}
