import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** Where host tools are looked for: PATH, plus the sbin folders a non-login root shell may lack (runc, iptables). */
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

/** The executable `tool` on `path` (a path given with a slash is checked as it is), or undefined. */
export async function findTool(tool: string, path = toolPath()): Promise<string | undefined> {
  if (tool.includes('/')) return (await isExecutable(tool)) ? tool : undefined;
  for (const dir of path.split(delimiter)) if (await isExecutable(join(dir, tool))) return join(dir, tool);
  return undefined;
}
