import { isApiError, RESOURCES, type IPAddress } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import type { IPFamily } from './cidr.js';
import { IP_ALLOCATOR_NAME, LABEL_IP_FAMILY, LABEL_MANAGED_BY } from './names.js';
import { serviceKey } from './service-spec.js';

/** The Service an IPAddress names as its parent (`namespace/name`), if it names a Service. */
export function parentServiceKey(address: IPAddress): string | undefined {
  const ref = address.spec?.parentRef;
  if (!ref || (ref.group ?? '') !== '' || ref.resource !== 'services' || !ref.name) return undefined;
  return serviceKey(ref.namespace ?? '', ref.name);
}

export function isManaged(address: IPAddress): boolean {
  return address.metadata.labels?.[LABEL_MANAGED_BY] === IP_ALLOCATOR_NAME;
}

/** The IPAddress objects of the allocator: creating one takes its address, as the name is the address. */
export class IPAddressClient {
  constructor(private readonly client: ApiClient) {}

  /** Creates the IPAddress for `ip`; answers undefined when it exists already. */
  async create(ip: string, family: IPFamily, parent: { namespace: string; name: string }): Promise<IPAddress | undefined> {
    const address: IPAddress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IPAddress',
      metadata: { name: ip, labels: { [LABEL_IP_FAMILY]: family, [LABEL_MANAGED_BY]: IP_ALLOCATOR_NAME } },
      spec: { parentRef: { group: '', resource: 'services', namespace: parent.namespace, name: parent.name } },
    };
    try {
      return await this.client.create<IPAddress>(RESOURCES.ipaddresses, address);
    } catch (err) {
      if (isApiError(err, 'AlreadyExists')) return undefined;
      throw err;
    }
  }

  async get(ip: string): Promise<IPAddress | undefined> {
    try {
      return await this.client.get<IPAddress>(RESOURCES.ipaddresses, ip);
    } catch (err) {
      if (isApiError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  async list(): Promise<IPAddress[]> {
    return (await this.client.list<IPAddress>(RESOURCES.ipaddresses)).items;
  }

  /** Deletes the IPAddress, only if it is still the object `uid` names (when given); answers whether it did. */
  async delete(ip: string, uid?: string): Promise<boolean> {
    try {
      await this.client.delete(RESOURCES.ipaddresses, ip, undefined, uid ? { preconditions: { uid } } : undefined);
      return true;
    } catch (err) {
      if (isApiError(err, 'NotFound') || isApiError(err, 'Conflict')) return false;
      throw err;
    }
  }
}
