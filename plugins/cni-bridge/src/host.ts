import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '@skiff/api';
import { findTool } from '@skiff/node-host';
import { CniError } from './errors.js';
import { REQUIRED_PLUGINS, REQUIRED_TOOLS } from './names.js';

export { toolPath } from '@skiff/node-host';

export type HostTools = Record<(typeof REQUIRED_TOOLS)[number], string>;

/** Root, the plugin binaries and the host tools: each missing piece is one line saying what to do. */
export async function preflight(binDir: string, path: string, uid = process.getuid?.()): Promise<HostTools> {
  if (uid !== 0) throw new CniError('SKIFF_ERR_CNI_NOT_ROOT', { uid: String(uid ?? 'unknown') });
  for (const plugin of REQUIRED_PLUGINS) if (!(await findTool(plugin, binDir))) throw new CniError('SKIFF_ERR_CNI_PLUGIN_MISSING', { plugin, binDir });
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
    throw new CniError('SKIFF_ERR_CNI_SYSCTL', { key, value, detail: errorMessage(err) }, { cause: err });
  }
}
