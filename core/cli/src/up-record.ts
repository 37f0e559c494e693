import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isJsonObject } from '@skiff/api';
import { writeFileAtomically, type Kernel } from '@skiff/kernel';

/**
 * What the last `skiff up` in a data dir started, written once it is ready (`<data dir>/up.json`, 0600): what `skiff
 * status` shows about a cluster that its API does not say (the preset, the log file, the plugins and their taps) and
 * what `skiff plugins` starts from when no flag names a preset.
 */
export interface UpRecord {
  skiff: string;
  preset: string;
  configFile?: string;
  server?: string;
  /** Absent when the logs went to stderr. */
  logFile?: string;
  pid: number;
  startedAt: string;
  plugins: number;
  /** Per hook with taps: how many. */
  taps: Record<string, number>;
}

export function upRecordFile(dataDir: string): string {
  return join(dataDir, 'up.json');
}

/** How many taps each hook of `kernel` has (hooks without taps left out). */
export function tapCounts(kernel: Kernel): Record<string, number> {
  return Object.fromEntries(
    Object.entries(kernel.hooks)
      .map(([name, hook]) => [name, hook.taps.length] as const)
      .filter(([, count]) => count > 0),
  );
}

export function writeUpRecord(dataDir: string, record: UpRecord): void {
  writeFileAtomically(upRecordFile(dataDir), `${JSON.stringify(record, null, 2)}\n`, 0o600);
}

/** The record of the last `skiff up` in `dataDir`; undefined when there is none (or it cannot be read). */
export function readUpRecord(dataDir: string): UpRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(upRecordFile(dataDir), 'utf8'));
    return isJsonObject(parsed) && typeof parsed.preset === 'string' ? (parsed as unknown as UpRecord) : undefined;
  } catch {
    return undefined;
  }
}
