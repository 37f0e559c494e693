// rbac: filled in by the kind declarations of this API group.
import type { ResourceDefinition } from '@skiff/api';

export const RBAC_KINDS: ResourceDefinition[] = [];
