// The restricted level of the Pod Security Standards: hardening on top of baseline. Some of these replace a
// baseline check (their `overrides`) while they apply, so a pod is told about one rule, the stricter one.
import { containersPhrase, plural, quoted, sortedSet } from '../format.js';
import { allowedSeccompType, forbiddenSeccompTypes, settersPhrase, unmaskedProcMount } from './baseline.js';
import { allContainers, exceptUserNamespaced, exceptWindows, namesOf, type CheckDefinition, type PodCheck } from './types.js';

const allowPrivilegeEscalation: PodCheck = ({ spec }) => {
  const containers = namesOf(spec, (c) => c.securityContext?.allowPrivilegeEscalation !== false);
  if (containers.length === 0) return undefined;
  return {
    reason: 'allowPrivilegeEscalation != false',
    detail: `${containersPhrase(containers)} must set securityContext.allowPrivilegeEscalation=false`,
  };
};

const capabilities: PodCheck = ({ spec }) => {
  const missingDropAll: string[] = [];
  const addingOthers: string[] = [];
  const added: string[] = [];
  for (const container of allContainers(spec)) {
    const declared = container.securityContext?.capabilities;
    if (!declared?.drop?.includes('ALL')) missingDropAll.push(container.name);
    const others = (declared?.add ?? []).filter((capability) => capability !== 'NET_BIND_SERVICE');
    if (others.length === 0) continue;
    addingOthers.push(container.name);
    added.push(...others);
  }
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingOthers.length) details.push(`${containersPhrase(addingOthers)} must not include ${quoted(sortedSet(added))} in securityContext.capabilities.add`);
  return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
};

/** Inline volume sources a restricted pod may use; any other (hostPath, nfs, iscsi…) is forbidden. */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];

/** The forbidden sources by their field name, as the message names them. */
const FORBIDDEN_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

const volumeTypes: PodCheck = ({ spec }) => {
  const volumes: string[] = [];
  const types: string[] = [];
  for (const volume of spec.volumes ?? []) {
    const fields = volume as unknown as Record<string, unknown>;
    if (ALLOWED_VOLUME_SOURCES.some((source) => fields[source] != null)) continue;
    volumes.push(volume.name);
    types.push(FORBIDDEN_VOLUME_SOURCES.find((source) => fields[source] != null) ?? 'unknown');
  }
  if (volumes.length === 0) return undefined;
  const distinct = sortedSet(types);
  return {
    reason: 'restricted volume types',
    detail: `${plural(volumes.length, 'volume', 'volumes')} ${quoted(volumes)} ${plural(volumes.length, 'uses', 'use')} ${plural(distinct.length, 'restricted volume type', 'restricted volume types')} ${quoted(distinct)}`,
  };
};

const runAsNonRoot: PodCheck = ({ spec }) => {
  const podValue = spec.securityContext?.runAsNonRoot;
  const explicitlyRoot = namesOf(spec, (c) => c.securityContext?.runAsNonRoot === false);
  if (podValue === false || explicitlyRoot.length > 0)
    return { reason: 'runAsNonRoot != true', detail: `${settersPhrase(podValue === false, explicitlyRoot)} must not set securityContext.runAsNonRoot=false` };
  if (podValue === true) return undefined;
  const unset = namesOf(spec, (c) => c.securityContext?.runAsNonRoot == null);
  if (unset.length === 0) return undefined;
  return { reason: 'runAsNonRoot != true', detail: `pod or ${containersPhrase(unset)} must set securityContext.runAsNonRoot=true` };
};

const runAsUser: PodCheck = ({ spec }) => {
  const pod = spec.securityContext?.runAsUser === 0;
  const containers = namesOf(spec, (c) => c.securityContext?.runAsUser === 0);
  if (!pod && containers.length === 0) return undefined;
  return { reason: 'runAsUser=0', detail: `${settersPhrase(pod, containers)} must not set runAsUser=0` };
};

const seccompRequired: PodCheck = ({ spec }) => {
  const explicit = forbiddenSeccompTypes(spec);
  if (explicit) return explicit;
  if (allowedSeccompType(spec.securityContext?.seccompProfile?.type)) return undefined;
  const unset = namesOf(spec, (c) => !c.securityContext?.seccompProfile);
  if (unset.length === 0) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `pod or ${containersPhrase(unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
  };
};

export const RESTRICTED_CHECKS: readonly CheckDefinition[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    revisions: [
      { since: 8, check: allowPrivilegeEscalation },
      { since: 25, check: exceptWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    revisions: [
      { since: 22, check: capabilities, overrides: ['capabilities_baseline'] },
      { since: 25, check: exceptWindows(capabilities), overrides: ['capabilities_baseline'] },
    ],
  },
  { id: 'procMount_restricted', level: 'restricted', revisions: [{ since: 35, check: unmaskedProcMount, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', revisions: [{ since: 0, check: volumeTypes, overrides: ['hostPathVolumes'] }] },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    revisions: [
      { since: 0, check: runAsNonRoot },
      { since: 35, check: exceptUserNamespaced(runAsNonRoot) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    revisions: [
      { since: 23, check: runAsUser },
      { since: 35, check: exceptUserNamespaced(runAsUser) },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    revisions: [
      { since: 19, check: seccompRequired, overrides: ['seccompProfile_baseline'] },
      { since: 25, check: exceptWindows(seccompRequired), overrides: ['seccompProfile_baseline'] },
    ],
  },
];
