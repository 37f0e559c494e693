import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONFIG_DEFAULTS, loadConfig, type SkiffConfig } from '@skiff/kernel';

/** How a command names a cluster: `--data-dir`, else the config file's (`--config`, or the one found in `cwd`). */
export interface ClusterDirFlags {
  dataDir?: string;
  configFile?: string;
}

/** A cluster's config file as `skiff up` finds it, loaded once on first use. */
export class ClusterLookup {
  private loaded: Promise<{ config: SkiffConfig; rootDir: string; file?: string }> | undefined;

  constructor(
    readonly cwd: string,
    readonly flags: ClusterDirFlags,
  ) {}

  config(): Promise<{ config: SkiffConfig; rootDir: string; file?: string }> {
    return (this.loaded ??= loadConfig({ cwd: this.cwd, file: this.flags.configFile }));
  }

  /** The data dir: the flag (from `cwd`), else the config file's (from the file's folder), else ./.skiff. */
  async dataDir(): Promise<string> {
    if (this.flags.dataDir) return resolve(this.cwd, this.flags.dataDir);
    const { config, rootDir } = await this.config();
    return resolve(rootDir, config.dataDir ?? CONFIG_DEFAULTS.dataDir);
  }
}

/** The cluster's data dir as `skiff up` finds it (see ClusterLookup). */
export function clusterDataDir(cwd: string, flags: ClusterDirFlags): Promise<string> {
  return new ClusterLookup(cwd, flags).dataDir();
}

/** `<data dir>/admin.kubeconfig`, which a running (or once started) cluster wrote; a one-line error when it is not there. */
export function adminKubeconfigIn(dataDir: string): string {
  const file = join(dataDir, 'admin.kubeconfig');
  if (!existsSync(file)) throw new Error(`no admin kubeconfig in ${dataDir}: start the cluster there (skiff up), or name its data dir with --data-dir`);
  return file;
}
