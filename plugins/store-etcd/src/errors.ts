import { codedError } from '@skiff/kernel';

/** Every error of the etcd store plugin that is not a StoreError of the contract: a stable code and a message template. */
export const ETCD_STORE_ERRORS = Object.freeze({
  SKIFF_ERR_ETCD_OPTIONS: 'the etcd store is misconfigured: {detail}',
  SKIFF_ERR_ETCD_UNREACHABLE: 'no etcd member answered at {endpoints}: {detail}',
  SKIFF_ERR_ETCD_VALUE: 'cannot store the object at {key}: {detail}',
  SKIFF_ERR_ETCD_CORRUPT: 'the value at {key} is not an object this store wrote: {detail}',
} as const);

export type EtcdStoreErrorCode = keyof typeof ETCD_STORE_ERRORS;

export class EtcdStoreError extends codedError('EtcdStoreError', ETCD_STORE_ERRORS) {}
