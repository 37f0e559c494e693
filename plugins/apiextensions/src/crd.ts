// The CustomResourceDefinition object as this plugin reads it (apiextensions.k8s.io/v1).
import type { KubeObject } from '@skiff/api';
import type { JSONSchemaProps } from './schema/index.js';

export interface CustomResourceNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CustomResourceVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: {
    status?: Record<string, never>;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export type CustomResourceDefinition = KubeObject & {
  spec: {
    group: string;
    names: CustomResourceNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CustomResourceVersion[];
    conversion?: { strategy?: string };
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: CrdCondition[];
    acceptedNames?: Partial<CustomResourceNames>;
    storedVersions?: string[];
  };
};

export function storageVersion(crd: CustomResourceDefinition): CustomResourceVersion | undefined {
  return crd.spec.versions.find((v) => v.storage);
}

export function conditionOf(crd: CustomResourceDefinition, type: string): CrdCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isEstablished(crd: CustomResourceDefinition): boolean {
  return conditionOf(crd, 'Established')?.status === 'True';
}
