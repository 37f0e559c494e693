// node: filled in by the kind declarations of this API group.
import type { ResourceDefinition } from '@skiff/api';

export const NODE_KINDS: ResourceDefinition[] = [];
