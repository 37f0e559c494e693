import type { TestImage } from './test-images.mjs';

export const DEFAULT_OUT: string;
export const DEFAULT_REGISTRY: string;
/** manifest.go's RegistryList keys with upstream v1.28.7's values. */
export const UPSTREAM_REGISTRIES: Readonly<Record<string, string>>;
/** One entry per missing input or tool, saying how to get it; empty when all are there. */
export function missingConformancePrerequisites(options?: { registry?: boolean; upstream?: string }): string[];
export interface ConformanceImages {
  out: string;
  architecture: string;
  reused: boolean;
  seconds: number;
  /** By stand-in: agnhost, busybox, pause, httpd-2.4.38-4, etcd, … */
  images: Record<string, TestImage>;
}
export function buildConformanceImages(options?: { out?: string; upstream?: string; log?: (line: string) => void }): Promise<ConformanceImages>;
/** RegistryList with the served registries under `address` (HOST:PORT). */
export function repoList(address: string): Record<string, string>;
/** Writes <outDir>/repo-list.yaml for KUBE_TEST_REPO_LIST; returns its path. */
export function writeRepoList(outDir: string, address: string): string;
