import { codedError } from '@skiff/kernel';

/** Every error of the bridge network: a stable code and a message template. */
export const CNI_ERRORS = Object.freeze({
  SKIFF_ERR_CNI_NOT_ROOT: 'the bridge network needs root (CNI plugins create interfaces and iptables rules); this process runs as uid {uid}',
  SKIFF_ERR_CNI_PLUGIN_MISSING: "CNI plugin {plugin} not found in {binDir}: install Debian's containernetworking-plugins (scripts/install-system-deps.sh)",
  SKIFF_ERR_CNI_TOOL_MISSING: '{tool} not found on PATH: the bridge network needs it (Debian packages iproute2 and iptables)',
  SKIFF_ERR_CNI_CIDR_INVALID: 'invalid {what} "{value}": {detail}',
  SKIFF_ERR_CNI_NODE_OUT_OF_RANGE: 'node {index} has no subnet: {clusterCIDR} holds {count} /{maskSize} node subnets',
  SKIFF_ERR_CNI_BRIDGE_NAME_TOO_LONG: 'bridge name "{name}" has {length} characters: interface names hold at most 15 (shorten option bridgeName)',
  SKIFF_ERR_CNI_NO_NETNS: 'cannot attach container {containerId} to network {network}: the sandbox has no network namespace path',
  SKIFF_ERR_CNI_NOT_ATTACHED: 'container {containerId} is not attached to network {network} (no cached ADD result)',
  SKIFF_ERR_CNI_PLUGIN_FAILED: 'CNI plugin {plugin} failed ({command}) on network {network}: {message}',
  SKIFF_ERR_CNI_PLUGIN_OUTPUT: 'CNI plugin {plugin} ({command}) on network {network} answered {problem}: {output}',
  SKIFF_ERR_CNI_SYSCTL: 'cannot set {key}={value}: {detail}',
  SKIFF_ERR_CNI_IPTABLES: 'cannot remove iptables rules of network {network}: {detail}',
} as const);

export type CniErrorCode = keyof typeof CNI_ERRORS;

export class CniError extends codedError('CniError', CNI_ERRORS) {}
