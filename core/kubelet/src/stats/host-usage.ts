import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeStatsInfo } from '@skiff/kernel';
import { workingSetBytes } from './usage.js';

/** Where the machine's figures are read (tests point these at folders of their own). */
export interface HostPaths {
  cgroupRoot: string;
  proc: string;
}

export const HOST_PATHS: HostPaths = Object.freeze({ cgroupRoot: '/sys/fs/cgroup', proc: '/proc' });

/** Linux's USER_HZ: /proc/stat counts CPU time in these ticks (100 per second on every architecture Node runs on). */
const USER_HZ = 100;

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** `key value` lines (memory.stat, cpu.stat) as numbers. */
function keyedNumbers(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) values.set(key, Number(value));
  }
  return values;
}

/** MemTotal and MemAvailable of /proc/meminfo, in bytes. */
async function meminfo(proc: string): Promise<{ total: number; available: number }> {
  const values = new Map<string, number>();
  for (const line of (await readFile(join(proc, 'meminfo'), 'utf8')).split('\n')) {
    const match = /^(\w+):\s+(\d+)\s*kB/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]) * 1024);
  }
  const total = values.get('MemTotal');
  const available = values.get('MemAvailable');
  if (total === undefined || available === undefined) throw new Error(`${join(proc, 'meminfo')} has no MemTotal or MemAvailable`);
  return { total, available };
}

/** CPU time the machine spent working (all but idle and iowait) since boot, from /proc/stat's first line. */
async function procCpuNanoSeconds(proc: string): Promise<number> {
  const words = ((await readFile(join(proc, 'stat'), 'utf8')).split('\n', 1)[0] ?? '').trim().split(/\s+/);
  if (words[0] !== 'cpu') throw new Error(`${join(proc, 'stat')} does not start with the cpu line`);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = words.slice(1).map(Number);
  return ((user + nice + system + irq + softirq + steal) * 1e9) / USER_HZ;
}

/**
 * The machine's usage as the kubelet reports its node's: the root cgroup's CPU time and working set (usage less
 * inactive file cache) on cgroup v1; on cgroup v2, whose root has no memory files, the root's cpu.stat and
 * /proc/meminfo (MemTotal − MemAvailable); /proc/stat and /proc/meminfo when neither is readable.
 */
export async function readHostStats(paths: HostPaths = HOST_PATHS): Promise<NodeStatsInfo> {
  const { cgroupRoot, proc } = paths;
  const timestampMs = Date.now();
  const memory = await meminfo(proc);
  const fromProc = { memoryWorkingSetBytes: memory.total - memory.available, memoryAvailableBytes: memory.available };
  if (await exists(join(cgroupRoot, 'cgroup.controllers'))) {
    const stat = keyedNumbers(await readFile(join(cgroupRoot, 'cpu.stat'), 'utf8'));
    const usec = stat.get('usage_usec');
    const cpuCoreNanoSeconds = usec === undefined ? await procCpuNanoSeconds(proc) : usec * 1000;
    return { timestampMs, cpuCoreNanoSeconds, ...fromProc };
  }
  const cpuacct = join(cgroupRoot, 'cpuacct', 'cpuacct.usage');
  const memoryDir = join(cgroupRoot, 'memory');
  if ((await exists(cpuacct)) && (await exists(join(memoryDir, 'memory.usage_in_bytes')))) {
    const [usage, stat, cpu] = await Promise.all([
      readFile(join(memoryDir, 'memory.usage_in_bytes'), 'utf8'),
      readFile(join(memoryDir, 'memory.stat'), 'utf8'),
      readFile(cpuacct, 'utf8'),
    ]);
    const usageBytes = Number(usage.trim());
    const inactiveFile = keyedNumbers(stat).get('total_inactive_file') ?? 0;
    return {
      timestampMs,
      cpuCoreNanoSeconds: Number(cpu.trim()),
      memoryWorkingSetBytes: workingSetBytes(usageBytes, inactiveFile),
      memoryUsageBytes: usageBytes,
      memoryAvailableBytes: memory.available,
    };
  }
  return { timestampMs, cpuCoreNanoSeconds: await procCpuNanoSeconds(proc), ...fromProc };
}
