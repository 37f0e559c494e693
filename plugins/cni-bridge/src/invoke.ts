import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { NetworkAttachment } from '@skiff/kernel';
import { CniError } from './errors.js';
import type { CniCommand, CniErrorReply, CniResult } from './types.js';

/** One plugin run: the CNI_* environment besides the network config on stdin. */
export interface Invocation {
  command: CniCommand;
  containerId: string;
  /** Empty on DEL when the namespace is already gone (the spec allows it). */
  netns: string;
  ifName: string;
  args: [string, string][];
}

/** CNI_ARGS as Kubernetes runtimes pass them: the pod's identity, unknown keys ignored by plugins. */
export function cniArgs(
  attachment: Pick<NetworkAttachment, 'containerId' | 'podName' | 'podNamespace' | 'podUid'>,
  extra: [string, string][] = [],
): [string, string][] {
  return [
    ['IgnoreUnknown', '1'],
    ['K8S_POD_NAMESPACE', attachment.podNamespace],
    ['K8S_POD_NAME', attachment.podName],
    ['K8S_POD_INFRA_CONTAINER_ID', attachment.containerId],
    ['K8S_POD_UID', attachment.podUid],
    ...extra,
  ];
}

export function formatCniArgs(args: [string, string][]): string {
  return args.map(([key, value]) => `${key}=${value}`).join(';');
}

/** The environment of a plugin process: ours (PATH for iptables and friends) plus the CNI variables. */
export function cniEnv(invocation: Invocation, cniPath: string, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...{},
    ...base,
    CNI_COMMAND: invocation.command,
    CNI_CONTAINERID: invocation.containerId,
    CNI_NETNS: invocation.netns,
    CNI_IFNAME: invocation.ifName,
    CNI_ARGS: formatCniArgs(invocation.args),
    CNI_PATH: cniPath,
  };
}

export interface PluginExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A plugin failure carries the plugin's own CNI error code (11 = try again later, …) next to ours. */
export type CniPluginError = CniError & { plugin: string; cniCode?: number };

function isErrorReply(value: unknown): value is CniErrorReply {
  return typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'number' && 'msg' in value && typeof value.msg === 'string';
}

/** A result object: the spec version is what everything else in it is read by. */
function isResult(value: unknown): value is CniResult {
  return typeof value === 'object' && value !== null && 'cniVersion' in value && typeof value.cniVersion === 'string';
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

/** The error for a plugin that exited non-zero: its JSON error when it printed one, else what it left on stderr. */
export function pluginFailure(plugin: string, command: CniCommand, network: string, exit: PluginExit): CniPluginError {
  let reply: unknown;
  try {
    reply = JSON.parse(exit.stdout);
  } catch {
    reply = undefined;
  }
  const how = exit.signal ? `killed by ${exit.signal}` : `exit status ${exit.code}`;
  const message = isErrorReply(reply)
    ? `${reply.msg}${reply.details ? `: ${reply.details}` : ''} (CNI error code ${reply.code})`
    : `${lastLine(exit.stderr) || lastLine(exit.stdout) || 'no output'} (${how})`;
  const error: CniPluginError = Object.assign(new CniError('SKIFF_ERR_CNI_PLUGIN_FAILED', { plugin, command, network, message }), { plugin });
  if (isErrorReply(reply)) error.cniCode = reply.code;
  return error;
}

/** Parses what ADD printed: a result object of the spec version. */
export function parseResult(plugin: string, command: CniCommand, network: string, stdout: string): CniResult {
  let result: unknown;
  try {
    result = JSON.parse(stdout);
  } catch {
    throw new CniError('SKIFF_ERR_CNI_PLUGIN_OUTPUT', {
      plugin,
      command,
      network,
      problem: 'with something that is not JSON',
      output: stdout.slice(0, 200) || '(nothing)',
    });
  }
  if (!isResult(result))
    throw new CniError('SKIFF_ERR_CNI_PLUGIN_OUTPUT', { plugin, command, network, problem: 'without a cniVersion', output: stdout.slice(0, 200) });
  return result;
}

/** Runs a plugin binary to its end, the config on stdin; a hung plugin is killed after `timeoutMs`. */
export function runPlugin(binDir: string, plugin: string, env: NodeJS.ProcessEnv, stdin: string, timeoutMs: number): Promise<PluginExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(binDir, plugin), [], { env, stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A plugin that exits before reading its config closes the pipe; its exit status says what happened.
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ code, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
    child.stdin.end(stdin);
  });
}
