import { codedError } from '@skiff/kernel';

/** Every error the client raises itself (API errors come back as `ApiError` from @skiff/api). */
export const CLIENT_ERRORS = Object.freeze({
  SKIFF_ERR_CLIENT_KUBECONFIG_READ: 'cannot read kubeconfig {file}: {detail}',
  SKIFF_ERR_CLIENT_KUBECONFIG_INVALID: 'invalid kubeconfig {file}: {detail}',
  SKIFF_ERR_CLIENT_KUBECONFIG_CONTEXT: 'kubeconfig {file} has no context "{context}" (contexts: {available})',
  SKIFF_ERR_CLIENT_FIELD_MANAGER_REQUIRED: 'an apply patch of {resource} "{name}" needs a fieldManager',
  SKIFF_ERR_CLIENT_OBJECT_NAME_REQUIRED: 'cannot {verb} a {resource} without metadata.name',
  SKIFF_ERR_CLIENT_SERVER_URL: 'invalid server URL "{server}": {detail}',
  SKIFF_ERR_CLIENT_WATCH_DECODE: 'cannot decode a watch event from {path}: {detail}',
  SKIFF_ERR_CLIENT_NOT_AUTHORIZED:
    'the authorizers do not let {who} {what}{why}; the cluster cannot work without it: add an authorizer that allows it, such as @skiff/plugin-authz-always-allow',
} as const);

export type ClientErrorCode = keyof typeof CLIENT_ERRORS;

export class ClientError extends codedError('ClientError', CLIENT_ERRORS) {}
