import { setTimeout as sleep } from 'node:timers/promises';
import type { AdmissionRequest } from '@skiff/kernel';
import { DEFAULT_SERVICE_ACCOUNT } from './names.js';
import { RESOURCES, type ServiceAccount } from '@skiff/api';

const RETRY_INTERVAL_MS = 100;

/**
 * Reads a pod's ServiceAccount. The `default` one is made by a controller just after its namespace, so a pod
 * created right behind a new namespace may arrive first: for it the read is retried for up to `waitMs`.
 */
export async function findServiceAccount(request: AdmissionRequest, name: string, waitMs: number): Promise<ServiceAccount | undefined> {
  const read = async () => (await request.get(RESOURCES.serviceaccounts, request.namespace, name)) as ServiceAccount | undefined;
  const found = await read();
  if (found || name !== DEFAULT_SERVICE_ACCOUNT) return found;
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    await sleep(Math.min(RETRY_INTERVAL_MS, deadline - Date.now()));
    const account = await read();
    if (account) return account;
  }
  return undefined;
}
