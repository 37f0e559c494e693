import { execFileSync } from 'node:child_process';

/** The local preset's ranges: Services (the service allocator's default) and pods (the CNI bridge's default). */
export const CLUSTER_RANGES = ['10.96.0.0/12', '10.244.0.0/16'];

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Gives each range an `unreachable` route while a test runs, so a packet to an address nothing on this machine
 * serves fails at once instead of leaving by the default route. More specific routes (a node's bridge subnet) and
 * the service proxy's rewriting of forwarded packets still win. Returns the function that removes them again.
 * Root only (as the local preset is).
 */
export function unreachableRoutes(ranges: readonly string[] = CLUSTER_RANGES): () => void {
  for (const range of ranges) ip(['route', 'replace', 'unreachable', range]);
  return () => {
    for (const range of ranges) {
      try {
        ip(['route', 'del', 'unreachable', range]);
      } catch {
        // already gone
      }
    }
  };
}
