// autoscaling: filled in by the kind declarations of this API group.
import type { ResourceDefinition } from '@skiff/api';

export const AUTOSCALING_KINDS: ResourceDefinition[] = [];
