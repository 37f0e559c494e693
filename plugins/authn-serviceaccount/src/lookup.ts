import type { KubeObject } from '@skiff/api';

/** Reads a stored object (the API server's `apiExtensions.get`): undefined when there is none. */
export type ObjectGetter = (resource: { group: string; resource: string }, namespace: string, name: string) => Promise<KubeObject | undefined>;
