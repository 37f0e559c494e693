import { codedError } from '@skiff/kernel';

/** Every error of the nftables service proxy: a stable code and a message template. */
export const PROXY_ERRORS = Object.freeze({
  SKIFF_ERR_PROXY_NOT_ROOT: 'the nftables service proxy needs root (it writes nftables rules and sysctls); this process runs as uid {uid}',
  SKIFF_ERR_PROXY_TOOL_MISSING: '{tool} not found on PATH: the nftables service proxy needs it (Debian package {package})',
  SKIFF_ERR_PROXY_NFT_FAILED: 'nft refused the {kind} sync of table ip {table}: {detail}',
  SKIFF_ERR_PROXY_SYSCTL: 'cannot set {key}={value}: {detail}',
} as const);

export type ProxyErrorCode = keyof typeof PROXY_ERRORS;

export class ProxyError extends codedError('ProxyError', PROXY_ERRORS) {}
