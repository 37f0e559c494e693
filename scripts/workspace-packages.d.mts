export interface WorkspacePackage {
  /** Relative to the repository root. */
  dir: string;
  pkg: { name: string; private?: boolean; dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; [key: string]: unknown };
}
export const REPO_ROOT: string;
export const REPOSITORY_URL: string;
/** Every workspace package, dependencies before their dependents. */
export function workspacePackages(root?: string): WorkspacePackage[];
/** The packages `lerna publish` would publish. */
export function publishablePackages(root?: string): WorkspacePackage[];
