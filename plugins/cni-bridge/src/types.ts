/** CNI spec shapes (1.0.0) as the plugins read and write them. */

export interface CniPluginConf {
  type: string;
  /** Runtime-config keys this plugin wants (CNI CONVENTIONS, e.g. `portMappings`). */
  capabilities?: Record<string, boolean>;
  [field: string]: unknown;
}

export interface CniConfList {
  cniVersion: string;
  name: string;
  plugins: CniPluginConf[];
}

export interface CniPortMapping {
  hostPort: number;
  containerPort: number;
  protocol: string;
  hostIP?: string;
}

/** Dynamic per-attachment settings, handed to plugins that declare the matching capability. */
export interface RuntimeConfig {
  portMappings?: CniPortMapping[];
}

export interface CniDns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

export interface CniResult {
  cniVersion: string;
  interfaces?: { name: string; mac?: string; sandbox?: string; mtu?: number }[];
  ips?: { address: string; gateway?: string; interface?: number }[];
  routes?: { dst: string; gw?: string }[];
  dns?: CniDns;
}

/** The JSON error a plugin prints on stdout when it fails (CNI spec, "Error"). */
export interface CniErrorReply {
  cniVersion?: string;
  code: number;
  msg: string;
  details?: string;
}

export type CniCommand = 'ADD' | 'DEL' | 'CHECK';
