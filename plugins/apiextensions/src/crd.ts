// Reading a CustomResourceDefinition (the generated apiextensions.k8s.io/v1 type).
import type { CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionVersion } from '@skiff/api';

export type { CustomResourceDefinition };
export type CustomResourceVersion = CustomResourceDefinitionVersion;

export function storageVersion(crd: CustomResourceDefinition): CustomResourceVersion | undefined {
  return crd.spec.versions.find((v) => v.storage);
}

export function conditionOf(crd: CustomResourceDefinition, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isEstablished(crd: CustomResourceDefinition): boolean {
  return conditionOf(crd, 'Established')?.status === 'True';
}
