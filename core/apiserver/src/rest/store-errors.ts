import { ApiError, errors } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { StoreError } from '@skiff/store';

export const CONFLICT_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

/** Translates a store failure into the API error a client expects; anything else is passed through. */
export function translateStoreError(err: unknown, definition: ResourceDefinition, name: string): unknown {
  if (!(err instanceof StoreError)) return err;
  switch (err.kind) {
    case 'NotFound':
      return errors.notFound(definition.resource, definition.group, name);
    case 'Exists':
      return errors.alreadyExists(definition.resource, definition.group, name);
    case 'Conflict':
      return errors.conflict(definition.resource, definition.group, name, CONFLICT_MESSAGE);
    case 'Compacted':
      return errors.gone(`The provided continue parameter is too old to display a consistent list result. ${err.message}`);
    case 'InvalidContinue':
      return errors.badRequest(`invalid continue token: ${err.message}`);
    case 'Closed':
      return errors.unavailable('the storage is shutting down');
    // A 500, as Kubernetes answers when etcd is out of space ("mvcc: database space exceeded"), with the store's
    // message (what is full, why, and that reads keep working); no Retry-After, so clients do not retry at once.
    case 'NoSpace':
    case 'CommitFailed':
      return new ApiError('SKIFF_ERR_API_INTERNAL', err.message);
  }
}
