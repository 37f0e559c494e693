// apps/v1: deployments, replica sets, stateful sets, daemon sets and controller revisions, one file each.
import type { ResourceDefinition } from '@skiff/api';
import { controllerRevisions } from './controllerrevisions.js';
import { daemonSets } from './daemonsets.js';
import { deployments } from './deployments.js';
import { replicaSets } from './replicasets.js';
import { statefulSets } from './statefulsets.js';

export { controllerRevisions, daemonSets, deployments, replicaSets, statefulSets };

export const APPS_KINDS: ResourceDefinition[] = [controllerRevisions, daemonSets, deployments, replicaSets, statefulSets];
