/** Problems that would make a published package broken or not ours; empty when all is well. */
export function checkPackages(root?: string): string[];
/** The files `npm pack` puts in each package's tarball, by package name. */
export function packedFiles(packages: { dir: string }[], root?: string): Map<string, Set<string>>;
