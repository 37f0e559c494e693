import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readHostStats } from './host-usage.js';

const MEMINFO = 'MemTotal:       1000000 kB\nMemFree:         200000 kB\nMemAvailable:    600000 kB\n';
const STAT = 'cpu  1000 50 250 9000 40 0 30 0 0 0\ncpu0 500 25 125 4500 20 0 15 0 0 0\n';

const dirs: string[] = [];
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'skiff-host-usage-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('readHostStats', () => {
  it("cgroup v1: the root's cpuacct.usage and memory usage less total_inactive_file", async () => {
    const root = tree({
      'cgroup/cpuacct/cpuacct.usage': '28830790096784\n',
      'cgroup/memory/memory.usage_in_bytes': '622698496\n',
      'cgroup/memory/memory.stat': 'cache 1\ninactive_file 5\ntotal_inactive_file 140447744\n',
      'proc/meminfo': MEMINFO,
      'proc/stat': STAT,
    });
    const stats = await readHostStats({ cgroupRoot: join(root, 'cgroup'), proc: join(root, 'proc') });
    expect(stats).toMatchObject({ cpuCoreNanoSeconds: 28830790096784, memoryWorkingSetBytes: 482250752, memoryUsageBytes: 622698496 });
    expect(stats.memoryAvailableBytes).toBe(600000 * 1024);
  });

  it("cgroup v2: the root's cpu.stat usage_usec, memory from /proc/meminfo (the v2 root has no memory files)", async () => {
    const root = tree({
      'cgroup/cgroup.controllers': 'cpu memory\n',
      'cgroup/cpu.stat': 'usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n',
      'proc/meminfo': MEMINFO,
      'proc/stat': STAT,
    });
    const stats = await readHostStats({ cgroupRoot: join(root, 'cgroup'), proc: join(root, 'proc') });
    expect(stats).toMatchObject({ cpuCoreNanoSeconds: 123_456_000, memoryWorkingSetBytes: 400000 * 1024 });
  });

  it('without cgroup files: busy ticks of /proc/stat (user, nice, system, irq, softirq, steal) at 100 per second', async () => {
    const root = tree({ 'cgroup/.keep': '', 'proc/meminfo': MEMINFO, 'proc/stat': STAT });
    const stats = await readHostStats({ cgroupRoot: join(root, 'cgroup'), proc: join(root, 'proc') });
    expect(stats.cpuCoreNanoSeconds).toBe((1000 + 50 + 250 + 0 + 30 + 0) * 10_000_000);
    expect(stats.memoryWorkingSetBytes).toBe(400000 * 1024);
  });

  it("reads this machine's figures", async () => {
    const stats = await readHostStats();
    expect(stats.cpuCoreNanoSeconds).toBeGreaterThan(0);
    expect(stats.memoryWorkingSetBytes).toBeGreaterThan(0);
  });
});
