import type { NetworkAttachment, NetworkResult } from '@skiff/kernel';
import { CNI_VERSION, LOOPBACK_NETWORK } from './names.js';
import type { CniConfList, CniDns, CniPluginConf, CniPortMapping, CniResult, RuntimeConfig } from './types.js';

export interface BridgeSettings {
  /** The CNI network name: it keys host-local's allocations, the result cache and the plugins' iptables comments. */
  networkName: string;
  bridge: string;
  subnet: string;
  /** host-local keeps allocations in `<ipamDataDir>/<networkName>/`. */
  ipamDataDir: string;
  hairpinMode: boolean;
  ipMasq: boolean;
  mtu?: number;
  dns?: CniDns;
}

/** The chain of a node: bridge (with host-local IPAM) then portmap, fed port mappings at run time. */
export function bridgeConflist(settings: BridgeSettings): CniConfList {
  const bridge: CniPluginConf = {
    type: 'bridge',
    bridge: settings.bridge,
    isGateway: true,
    isDefaultGateway: true,
    ipMasq: settings.ipMasq,
    hairpinMode: settings.hairpinMode,
    ...(settings.mtu === undefined ? {} : { mtu: settings.mtu }),
    ipam: { type: 'host-local', ranges: [[{ subnet: settings.subnet }]], dataDir: settings.ipamDataDir },
    ...(settings.dns && Object.keys(settings.dns).length > 0 ? { dns: settings.dns } : {}),
  };
  const portmap: CniPluginConf = { type: 'portmap', capabilities: { portMappings: true }, snat: true };
  return { cniVersion: CNI_VERSION, name: settings.networkName, plugins: [bridge, portmap] };
}

/** `lo` is brought up by the loopback plugin as a network of its own, outside the chain. */
export function loopbackConflist(): CniConfList {
  return { cniVersion: CNI_VERSION, name: LOOPBACK_NETWORK, plugins: [{ type: 'loopback' }] };
}

/**
 * What one plugin of a list reads on stdin: its own section plus the list's name and version, the runtime
 * config it has capabilities for, and the previous result of the chain.
 */
export function pluginInput(
  list: CniConfList,
  plugin: CniPluginConf,
  extra: { runtimeConfig?: RuntimeConfig; prevResult?: CniResult },
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...{}, ...plugin, cniVersion: list.cniVersion, name: list.name };
  const wanted = Object.entries(plugin.capabilities ?? {}).filter(([, on]) => on);
  const runtimeConfig = Object.fromEntries(
    wanted.map(([key]) => [key, extra.runtimeConfig?.[key as keyof RuntimeConfig]]).filter(([, value]) => value !== undefined),
  );
  if (Object.keys(runtimeConfig).length > 0) input.runtimeConfig = runtimeConfig;
  if (extra.prevResult) input.prevResult = extra.prevResult;
  return input;
}

/** The pod's host ports as the portmap plugin wants them; ports without a host port are not mapped. */
export function portMappingsOf(attachment: Pick<NetworkAttachment, 'portMappings'>): CniPortMapping[] {
  return (attachment.portMappings ?? [])
    .filter((mapping) => (mapping.hostPort ?? 0) > 0)
    .map((mapping) => ({
      hostPort: mapping.hostPort!,
      containerPort: mapping.containerPort,
      protocol: (mapping.protocol ?? 'TCP').toLowerCase(),
      ...(mapping.hostIp ? { hostIP: mapping.hostIp } : {}),
    }));
}

/** The kernel's view of a CNI result: the sandbox's addresses first of all. */
export function toNetworkResult(result: CniResult): NetworkResult {
  const interfaces = result.interfaces ?? [];
  const inSandbox = (index: number | undefined) => index === undefined || interfaces[index]?.sandbox !== undefined;
  const dns: NetworkResult['dns'] = {};
  if (result.dns?.nameservers?.length) dns.nameservers = result.dns.nameservers;
  if (result.dns?.search?.length) dns.search = result.dns.search;
  return {
    cniVersion: result.cniVersion,
    interfaces: interfaces.map(({ name, mac, sandbox }) => ({ name, ...(mac ? { mac } : {}), ...(sandbox ? { sandbox } : {}) })),
    ips: (result.ips ?? []).filter((ip) => inSandbox(ip.interface)).map(({ address, gateway }) => ({ address, ...(gateway ? { gateway } : {}) })),
    dns,
  };
}
