/** The pod and Service ranges, unreachable in every host's table while the hosts run. */
export const CLUSTER_RANGES: string[];
export const HOSTS_BRIDGE: string;
export const HOSTS_SUBNET: { prefix: string; bits: number };
/** skiff-h<index>: the network namespace of host `index`. */
export function hostName(index: number): string;
/** 192.168.(77 + network).(10 + index). */
export function hostAddress(index: number, network?: number): string;
export function createHosts(count: number, routed?: number[]): void;
export function removeHosts(count: number): void;
/** `nsenter --net=… -- argv`: runs argv in a host's network namespace only. */
export function inHostCommand(index: number, argv: string[]): string[];
export function skiffIn(index: number, args: string[], log: string, cwd: string): import('node:child_process').ChildProcess;
/** The control plane's config; `controlNodes` in-process nodes of its own (default none). */
export function controlPlaneConfig(controlPreset: string, controlNodes?: number): Record<string, unknown>;
export function startNode(dir: string, index: number, flags?: string[]): import('node:child_process').ChildProcess;
export function waitForHostLine(dir: string, index: number, pattern: RegExp, timeoutMs: number, fromOffset?: number): Promise<RegExpExecArray>;
export function up(options: {
  hosts: number;
  preset: string;
  controlPreset?: string;
  controlNodes?: number;
  /** Hosts on a second network, routed through the root namespace (their nodes use the VXLAN overlay). */
  routed?: number[];
  dir: string;
}): Promise<{ kubeconfig: string; pids: number[] }>;
export function down(options: { dir: string }): Promise<void>;
