import { constants } from 'node:fs';
import { access, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { CniError } from './errors.js';
import { REQUIRED_PLUGINS, REQUIRED_TOOLS } from './names.js';

/** Where the plugins (they call iptables) and we look for host tools: PATH, plus the sbin folders a non-login root shell may lack. */
export function toolPath(path = process.env.PATH ?? ''): string {
  const dirs = [...path.split(delimiter), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].filter(Boolean);
  return [...new Set(dirs)].join(delimiter);
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

export async function findTool(tool: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) if (await isExecutable(join(dir, tool))) return join(dir, tool);
  return undefined;
}

export type HostTools = Record<(typeof REQUIRED_TOOLS)[number], string>;

/** Root, the plugin binaries and the host tools: each missing piece is one line saying what to do. */
export async function preflight(binDir: string, path: string, uid = process.getuid?.()): Promise<HostTools> {
  if (uid !== 0) throw new CniError('SKIFF_ERR_CNI_NOT_ROOT', { uid: String(uid ?? 'unknown') });
  for (const plugin of REQUIRED_PLUGINS)
    if (!(await isExecutable(join(binDir, plugin)))) throw new CniError('SKIFF_ERR_CNI_PLUGIN_MISSING', { plugin, binDir });
  const tools: Partial<HostTools> = {};
  for (const tool of REQUIRED_TOOLS) {
    const found = await findTool(tool, path);
    if (!found) throw new CniError('SKIFF_ERR_CNI_TOOL_MISSING', { tool });
    tools[tool] = found;
  }
  return tools as HostTools;
}

/**
 * Sets a sysctl through /proc unless it already has the value; returns whether it changed. Pods reach
 * beyond their node only with forwarding on (the bridge plugin turns it on too when it is a gateway).
 */
export async function ensureSysctl(key: string, value: string): Promise<boolean> {
  const file = join('/proc/sys', ...key.split('.'));
  try {
    if ((await readFile(file, 'utf8')).trim() === value) return false;
    await writeFile(file, value);
    return true;
  } catch (err) {
    throw new CniError('SKIFF_ERR_CNI_SYSCTL', { key, value, detail: (err as Error).message }, { cause: err });
  }
}
