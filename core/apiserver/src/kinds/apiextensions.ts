// apiextensions.k8s.io/v1: custom resource definitions — stored and validated here; serving the
// resources they define is separate.
import {
  defineKind,
  RESOURCES,
  type CustomResourceDefinition,
  type CustomResourceDefinitionNames,
  type CustomResourceDefinitionSpec,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import { fieldErrors, isDNS1123Label, isDNS1123Subdomain, validateImmutable } from '@skiff/api/validation';
import { column } from './columns.js';

const SCOPES = ['Cluster', 'Namespaced'];

const KIND_FORMAT = /^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/;

function validateNames(names: Partial<CustomResourceDefinitionNames> | undefined): StatusCause[] {
  const path = 'spec.names';
  const n = names ?? {};
  const causes: StatusCause[] = [];
  const label = (value: string | undefined, field: string, requiredValue: boolean) => {
    if (!value) {
      if (requiredValue) causes.push(fieldErrors.required(`${path}.${field}`));
      return;
    }
    causes.push(...isDNS1123Label(value).map((message) => fieldErrors.invalid(`${path}.${field}`, value, message)));
  };
  label(n.plural, 'plural', true);
  label(n.singular, 'singular', false);
  (n.shortNames ?? []).forEach((shortName, i) => label(shortName, `shortNames[${i}]`, false));
  (n.categories ?? []).forEach((category, i) => label(category, `categories[${i}]`, false));
  for (const field of ['kind', 'listKind'] as const) {
    const value = n[field];
    if (!value) causes.push(fieldErrors.required(`${path}.${field}`));
    else if (!KIND_FORMAT.test(value))
      causes.push(fieldErrors.invalid(`${path}.${field}`, value, 'may have mixed case, but should otherwise match: [a-z0-9]([-a-z0-9]*[a-z0-9])?'));
  }
  if (n.kind && n.kind === n.listKind) causes.push(fieldErrors.invalid(`${path}.listKind`, n.listKind, 'kind and listKind may not be the same'));
  return causes;
}

function validateCRD(crd: CustomResourceDefinition, old?: CustomResourceDefinition): StatusCause[] {
  const spec = crd.spec ?? {};
  const causes: StatusCause[] = [];
  const expected = `${spec.names?.plural ?? ''}.${spec.group ?? ''}`;
  if (crd.metadata.name !== expected) causes.push(fieldErrors.invalid('metadata.name', crd.metadata.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  if (!spec.group) causes.push(fieldErrors.required('spec.group'));
  else {
    causes.push(...isDNS1123Subdomain(spec.group).map((message) => fieldErrors.invalid('spec.group', spec.group, message)));
    if (!spec.group.includes('.')) causes.push(fieldErrors.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) causes.push(fieldErrors.required('spec.scope'));
  else if (!SCOPES.includes(spec.scope)) causes.push(fieldErrors.notSupported('spec.scope', spec.scope, SCOPES));
  const versions = spec.versions ?? [];
  if (versions.length === 0) causes.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  else {
    const names = new Set<string>();
    versions.forEach((version, i) => {
      const path = `spec.versions[${i}].name`;
      if (!version.name) causes.push(fieldErrors.required(path));
      else causes.push(...isDNS1123Label(version.name).map((message) => fieldErrors.invalid(path, version.name, message)));
      if (version.name && names.has(version.name)) causes.push(fieldErrors.invalid(path, version.name, 'must be unique'));
      names.add(version.name ?? '');
    });
    if (versions.filter((version) => version.storage).length !== 1)
      causes.push(
        fieldErrors.invalid(
          'spec.versions',
          versions.map((version) => version.name),
          'must have exactly one version marked as storage version',
        ),
      );
  }
  causes.push(...validateNames(spec.names));
  if (old) {
    const was = old.spec ?? {};
    causes.push(...validateImmutable(spec.group, was.group, 'spec.group'));
    causes.push(...validateImmutable(spec.scope, was.scope, 'spec.scope'));
  }
  return causes;
}

export const customResourceDefinitions = defineKind<CustomResourceDefinition>({
  ...{},
  ...RESOURCES.customresourcedefinitions,
  subresources: ['status'],
  columns: [column('Created At', '.metadata.creationTimestamp', { type: 'date' })],
  strategy: {
    defaults(crd) {
      // Defaults come before validation: the spec may still lack the fields it requires, or be missing.
      const unchecked: { spec?: Partial<CustomResourceDefinitionSpec> } = crd;
      const spec = (unchecked.spec ??= {});
      const names = spec.names;
      if (names?.kind) {
        names.singular ??= names.kind.toLowerCase();
        names.listKind ??= `${names.kind}List`;
      }
      spec.conversion ??= { strategy: 'None' };
    },
    validate: validateCRD,
  },
});

export const APIEXTENSIONS_KINDS: ResourceDefinition[] = [customResourceDefinitions];
