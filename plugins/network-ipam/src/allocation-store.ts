import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ipToInt } from './cidr.js';

/** One handed-out address, as its file records it. */
export interface Allocation {
  ip: string;
  containerId: string;
  ifName: string;
  podUid: string;
  /** namespace/name, for people reading the folder. */
  pod: string;
}

const LINE_BREAK = '\r\n';
const LAST_RESERVED = 'last_reserved_ip.0';

function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException)?.code === code;
}

/**
 * Allocations kept the way the host-local CNI plugin keeps them: one file per IP, named by the IP, holding
 * the container id and interface name (plus the pod, so a recreated sandbox of the same pod can take its
 * address back). A file is created with O_EXCL, so two writers can never both get one address.
 */
export class AllocationStore {
  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async list(): Promise<Allocation[]> {
    const names = await readdir(this.dir);
    const allocations: Allocation[] = [];
    for (const name of names) {
      if (ipToInt(name) === undefined) continue;
      const allocation = await this.read(name);
      if (allocation) allocations.push(allocation);
    }
    return allocations;
  }

  /** Claims `allocation.ip`; false when someone holds it already. */
  async reserve(allocation: Allocation): Promise<boolean> {
    try {
      await writeFile(join(this.dir, allocation.ip), this.encode(allocation), { flag: 'wx' });
      return true;
    } catch (err) {
      if (isErrno(err, 'EEXIST')) return false;
      throw err;
    }
  }

  /** Rewrites an address's holder (same pod, new sandbox), atomically. */
  async replace(allocation: Allocation): Promise<void> {
    const temporary = join(this.dir, `.${allocation.ip}.tmp`);
    await writeFile(temporary, this.encode(allocation));
    await rename(temporary, join(this.dir, allocation.ip));
  }

  async release(ip: string): Promise<void> {
    await unlink(join(this.dir, ip)).catch((err: unknown) => {
      if (!isErrno(err, 'ENOENT')) throw err;
    });
  }

  async read(ip: string): Promise<Allocation | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.dir, ip), 'utf8');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return undefined;
      throw err;
    }
    const [containerId = '', ifName = '', podUid = '', pod = ''] = text.split(/\r?\n/);
    return { ip, containerId, ifName, podUid, pod };
  }

  /** The last address handed out, so allocation goes round the range instead of reusing a freed IP at once. */
  async lastReserved(): Promise<string | undefined> {
    try {
      return (await readFile(join(this.dir, LAST_RESERVED), 'utf8')).trim() || undefined;
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return undefined;
      throw err;
    }
  }

  async setLastReserved(ip: string): Promise<void> {
    await writeFile(join(this.dir, LAST_RESERVED), ip);
  }

  private encode(allocation: Allocation): string {
    return [allocation.containerId, allocation.ifName, allocation.podUid, allocation.pod].join(LINE_BREAK);
  }
}
