// The CustomResourceDefinition object as this plugin reads it (apiextensions.k8s.io/v1).
import type {
  CustomResourceDefinitionCondition,
  CustomResourceDefinitionSpec,
  CustomResourceDefinitionStatus,
  CustomResourceDefinitionVersion,
  KubeObject,
  ObjectMeta,
} from '@skiff/api';
import type { JSONSchemaProps } from './schema/index.js';

// The generated CustomResourceDefinition types everything but a version's schema, which it renders with Go's
// wrapper structs (JSONSchemaPropsOrArray…); on the wire `items` is a schema or a list of schemas and
// `additionalProperties` a boolean or a schema, as the plugin's own JSONSchemaProps has it.

export interface CustomResourceVersion extends Omit<CustomResourceDefinitionVersion, 'schema'> {
  schema?: { openAPIV3Schema?: JSONSchemaProps };
}

export interface CustomResourceDefinition extends KubeObject {
  metadata: ObjectMeta;
  spec: Omit<CustomResourceDefinitionSpec, 'versions'> & { versions: CustomResourceVersion[] };
  status?: CustomResourceDefinitionStatus;
}

export function storageVersion(crd: CustomResourceDefinition): CustomResourceVersion | undefined {
  return crd.spec.versions.find((v) => v.storage);
}

export function conditionOf(crd: CustomResourceDefinition, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isEstablished(crd: CustomResourceDefinition): boolean {
  return conditionOf(crd, 'Established')?.status === 'True';
}
