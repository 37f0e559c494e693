import type { LocalRegistry } from './local-registry.mjs';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}
export interface InstalledSkiff {
  server: string;
  kubeconfig: string;
  /** Sends SIGINT and resolves with the exit code. */
  stop(): Promise<number | null>;
  output(): string;
}
export const NODE_FLOOR: string;
export const ADMISSION_MESSAGE: string;
export const PREFERRED_LABEL: { label: string; value: string; weight: number };
export function run(command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult>;
export function emptyFolder(prefix: string): string;
export function installFromRegistry(registry: LocalRegistry, dir: string, packages: string[]): Promise<CommandResult>;
export function enginesProblems(dir: string, floor?: string): string[];
export function startInstalledSkiff(
  dir: string,
  args: string[],
  options?: { timeoutMs?: number; command?: string[]; env?: NodeJS.ProcessEnv },
): Promise<InstalledSkiff>;
export function kubectl(kubeconfig: string, cacheDir: string): (...args: string[]) => Promise<CommandResult>;
export function guideFiles(markdown?: string): Map<string, string>;
