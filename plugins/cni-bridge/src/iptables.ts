import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { errorMessage } from '@skiff/api';
import { CniError } from './errors.js';

const run = promisify(execFile);

/** The tables the bridge (ipMasq) and portmap plugins write to. */
const TABLES = ['nat', 'filter'] as const;

/**
 * The container a rule belongs to, when the plugins tagged it for the network: the comment reads, as iptables-save
 * prints it, `name: "<network>" id: "<container>"` (bridge's ipMasq chain) or `dnat name: …` (portmap's entry in
 * CNI-HOSTPORT-DNAT).
 */
function containerOf(rule: string, networkName: string): string | undefined {
  const tag = / --comment "(?:dnat )?name: \\"([^"\\]*)\\" id: \\"([^"\\]*)\\""/.exec(rule);
  return tag?.[1] === networkName ? tag[2] : undefined;
}

/** Which containers' rules to remove: one, those a predicate picks, or (undefined) every one of the network. */
export type ContainerSelection = string | ((containerId: string) => boolean) | undefined;

function selects(selection: ContainerSelection, containerId: string): boolean {
  if (selection === undefined) return true;
  return typeof selection === 'string' ? selection === containerId : selection(containerId);
}

/** Per-container chains only: the portmap plugin's shared CNI-HOSTPORT-* chains stay (it never deletes them either). */
function isOwnChain(chain: string): boolean {
  return chain.startsWith('CNI-') && !chain.startsWith('CNI-HOSTPORT-');
}

/**
 * An iptables-restore script (for `--noflush`) that removes one table's rules tagged with the network and a
 * selected container, and the per-container chains they jump to or live in; undefined when there is nothing to remove.
 */
export function sweepScript(saved: string, table: string, networkName: string, containers?: ContainerSelection): string | undefined {
  const lines = saved.split('\n');
  const declared = new Set(lines.filter((line) => line.startsWith(':')).map((line) => line.slice(1).split(' ')[0]!));
  const rules = lines.filter((line) => {
    const containerId = line.startsWith('-A ') ? containerOf(line, networkName) : undefined;
    return containerId !== undefined && selects(containers, containerId);
  });
  const chains = new Set<string>();
  for (const rule of rules) {
    const chain = rule.split(' ')[1]!;
    const target = / -j (\S+)/.exec(rule)?.[1];
    if (isOwnChain(chain)) chains.add(chain);
    if (target && isOwnChain(target) && declared.has(target)) chains.add(target);
  }
  const deletions = rules.filter((rule) => !chains.has(rule.split(' ')[1]!)).map((rule) => `-D ${rule.slice(3)}`);
  if (deletions.length === 0 && chains.size === 0) return undefined;
  return [`*${table}`, ...deletions, ...[...chains].map((chain) => `-F ${chain}`), ...[...chains].map((chain) => `-X ${chain}`), 'COMMIT', ''].join('\n');
}

export interface IptablesTools {
  save: string;
  restore: string;
}

/**
 * Removes what the bridge and portmap plugins left in iptables for the network's selected containers (all by default):
 * the bridge plugin skips its ipMasq teardown when DEL comes after the namespace is gone, and a crash
 * between ADD and DEL leaves portmap's chains. Returns how many tables changed.
 */
export async function sweepRules(tools: IptablesTools, networkName: string, containers?: ContainerSelection): Promise<number> {
  let changed = 0;
  for (const table of TABLES) {
    try {
      const { stdout } = await run(tools.save, ['-t', table]);
      const script = sweepScript(stdout, table, networkName, containers);
      if (!script) continue;
      await restore(tools.restore, script);
      changed++;
    } catch (err) {
      throw new CniError('SKIFF_ERR_CNI_IPTABLES', { network: networkName, detail: errorMessage(err).trim() }, { cause: err });
    }
  }
  return changed;
}

function restore(command: string, script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, ['--noflush', '--wait'], (err) => (err ? reject(err) : resolve()));
    child.stdin!.end(script);
  });
}
