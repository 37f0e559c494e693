// flowcontrol.apiserver.k8s.io/v1: API priority and fairness — flow schemas and priority levels.
import {
  defineKind,
  RESOURCES,
  type FlowcontrolV1Subject,
  type FlowSchema,
  type FlowSchemaSpec,
  type LimitedPriorityLevelConfiguration,
  type LimitResponse,
  type PriorityLevelConfiguration,
  type QueuingConfiguration,
  type ResourceDefinition,
  type StatusCause,
  STATUS_ONLY_METADATA,
} from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

const DEFAULT_MATCHING_PRECEDENCE = 1000;
const MAX_MATCHING_PRECEDENCE = 10000;
const DEFAULT_NOMINAL_SHARES = 30;
const DEFAULT_QUEUING = { queues: 64, handSize: 8, queueLengthLimit: 50 };
/** Shuffle sharding may use at most this many bits of the flow's hash. */
const MAX_HASH_BITS = 60;

const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];

function validateSubject(subject: FlowcontrolV1Subject, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const member = { User: subject.user, Group: subject.group, ServiceAccount: subject.serviceAccount }[subject.kind ?? ''];
  if (!SUBJECT_KINDS.includes(subject.kind ?? '')) return [fieldErrors.notSupported(`${path}.kind`, subject.kind ?? '', SUBJECT_KINDS)];
  const field = subject.kind === 'ServiceAccount' ? 'serviceAccount' : (subject.kind ?? '').toLowerCase();
  if (!member) return [fieldErrors.required(`${path}.${field}`, `${field} is required when subject kind is '${subject.kind}'`)];
  if (!member.name) causes.push(fieldErrors.required(`${path}.${field}.name`));
  if (subject.kind === 'ServiceAccount' && !subject.serviceAccount?.namespace) causes.push(fieldErrors.required(`${path}.serviceAccount.namespace`));
  return causes;
}

function validateFlowSchema(flowSchema: FlowSchema): StatusCause[] {
  const spec = flowSchema.spec ?? {};
  const causes: StatusCause[] = [];
  if (!spec.priorityLevelConfiguration?.name) causes.push(fieldErrors.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  const precedence = spec.matchingPrecedence ?? 0;
  if (precedence <= 0) causes.push(fieldErrors.invalid('spec.matchingPrecedence', precedence, 'must be a positive value'));
  else if (precedence > MAX_MATCHING_PRECEDENCE)
    causes.push(fieldErrors.invalid('spec.matchingPrecedence', precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  const method = spec.distinguisherMethod?.type;
  if (spec.distinguisherMethod && method !== 'ByUser' && method !== 'ByNamespace')
    causes.push(fieldErrors.notSupported('spec.distinguisherMethod.type', method ?? '', ['ByNamespace', 'ByUser']));
  (spec.rules ?? []).forEach((rules, i) => {
    const path = `spec.rules[${i}]`;
    if (!rules.subjects?.length) causes.push(fieldErrors.required(`${path}.subjects`, 'subjects must contain at least one value'));
    (rules.subjects ?? []).forEach((subject, j) => causes.push(...validateSubject(subject, `${path}.subjects[${j}]`)));
    if (!rules.resourceRules?.length && !rules.nonResourceRules?.length)
      causes.push(fieldErrors.required(`${path}`, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
    (rules.resourceRules ?? []).forEach((rule, j) => {
      const at = `${path}.resourceRules[${j}]`;
      if (!rule.verbs?.length) causes.push(fieldErrors.required(`${at}.verbs`, 'verbs must contain at least one value'));
      if (!rule.apiGroups?.length) causes.push(fieldErrors.required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
      if (!rule.resources?.length) causes.push(fieldErrors.required(`${at}.resources`, 'resource rules must supply at least one resource'));
      if (!rule.clusterScope && !rule.namespaces?.length)
        causes.push(fieldErrors.required(`${at}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
    });
    (rules.nonResourceRules ?? []).forEach((rule, j) => {
      const at = `${path}.nonResourceRules[${j}]`;
      if (!rule.verbs?.length) causes.push(fieldErrors.required(`${at}.verbs`, 'verbs must contain at least one value'));
      if (!rule.nonResourceURLs?.length) causes.push(fieldErrors.required(`${at}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
    });
  });
  return causes;
}

function validatePercent(value: number | undefined, path: string): StatusCause[] {
  return value !== undefined && (value < 0 || value > 100) ? [fieldErrors.invalid(path, value, 'must be between 0 and 100, inclusive')] : [];
}

function validateQueuing(queuing: QueuingConfiguration | undefined, path: string): StatusCause[] {
  if (!queuing) return [fieldErrors.required(path, 'must not be empty if limitResponse.type is Queue')];
  const { queues = 0, handSize = 0, queueLengthLimit = 0 } = queuing;
  const causes: StatusCause[] = [];
  if (queueLengthLimit <= 0) causes.push(fieldErrors.invalid(`${path}.queueLengthLimit`, queueLengthLimit, 'must be positive'));
  if (queues <= 0) causes.push(fieldErrors.invalid(`${path}.queues`, queues, 'must be positive'));
  if (handSize <= 0) causes.push(fieldErrors.invalid(`${path}.handSize`, handSize, 'must be positive'));
  else if (handSize > queues) causes.push(fieldErrors.invalid(`${path}.handSize`, handSize, `should not be greater than queues (${queues})`));
  else {
    const bits = Math.ceil(Math.log2(queues) * handSize);
    if (bits > MAX_HASH_BITS)
      causes.push(
        fieldErrors.invalid(
          `${path}.handSize`,
          handSize,
          `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`,
        ),
      );
  }
  return causes;
}

function validatePriorityLevel(level: PriorityLevelConfiguration): StatusCause[] {
  const spec = level.spec ?? {};
  const causes: StatusCause[] = [];
  if (spec.type === 'Limited') {
    if (spec.exempt) causes.push(fieldErrors.forbidden('spec.exempt', 'must be nil if the type is Limited'));
    const limited = spec.limited;
    if (!limited) causes.push(fieldErrors.required('spec.limited', 'must not be empty when type is Limited'));
    else {
      if ((limited.nominalConcurrencyShares ?? 0) < 0)
        causes.push(fieldErrors.invalid('spec.limited.nominalConcurrencyShares', limited.nominalConcurrencyShares, 'must be a non-negative integer'));
      causes.push(...validatePercent(limited.lendablePercent, 'spec.limited.lendablePercent'));
      if (limited.borrowingLimitPercent !== undefined && limited.borrowingLimitPercent < 0)
        causes.push(fieldErrors.invalid('spec.limited.borrowingLimitPercent', limited.borrowingLimitPercent, 'if specified, must be a non-negative integer'));
      const response: Partial<LimitResponse> = limited.limitResponse ?? {};
      if (response.type === 'Queue') causes.push(...validateQueuing(response.queuing, 'spec.limited.limitResponse.queuing'));
      else if (response.type === 'Reject') {
        if (response.queuing)
          causes.push(fieldErrors.forbidden('spec.limited.limitResponse.queuing', 'must be nil if limited.limitResponse.type is not Limited'));
      } else causes.push(fieldErrors.notSupported('spec.limited.limitResponse.type', response.type ?? '', ['Queue', 'Reject']));
    }
  } else if (spec.type === 'Exempt') {
    if (spec.limited) causes.push(fieldErrors.forbidden('spec.limited', 'must be nil if the type is not Limited'));
    if ((spec.exempt?.nominalConcurrencyShares ?? 0) < 0)
      causes.push(fieldErrors.invalid('spec.exempt.nominalConcurrencyShares', spec.exempt?.nominalConcurrencyShares, 'must be a non-negative integer'));
    causes.push(...validatePercent(spec.exempt?.lendablePercent, 'spec.exempt.lendablePercent'));
  } else causes.push(fieldErrors.notSupported('spec.type', spec.type ?? '', ['Exempt', 'Limited']));
  return causes;
}

/** `<none>` unless the level is Limited (and, for the queue columns, queues). */
function limitedCell(level: PriorityLevelConfiguration, read: (limited: LimitedPriorityLevelConfiguration) => number | undefined): number | string {
  const limited = level.spec?.limited;
  return (limited && read(limited)) ?? '<none>';
}

export const flowSchemas = defineKind<FlowSchema>({
  ...{},
  ...RESOURCES.flowschemas,
  subresources: ['status'],
  keptOnStatusUpdate: STATUS_ONLY_METADATA,
  columns: [
    computed('PriorityLevel', (fs) => fs.spec?.priorityLevelConfiguration?.name ?? ''),
    computed('MatchingPrecedence', (fs) => fs.spec?.matchingPrecedence ?? 0, { type: 'integer' }),
    computed('DistinguisherMethod', (fs) => fs.spec?.distinguisherMethod?.type ?? '<none>'),
    AGE_COLUMN,
    computed('MissingPL', (fs) => fs.status?.conditions?.find((c) => c.type === 'Dangling')?.status ?? '?'),
  ],
  strategy: {
    defaults(flowSchema) {
      // Defaults come before validation: the spec may still lack the fields it requires, or be missing.
      const unchecked: { spec?: Partial<FlowSchemaSpec> } = flowSchema;
      const spec = (unchecked.spec ??= {});
      if (!spec.matchingPrecedence) spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
    },
    validate: validateFlowSchema,
  },
});

export const priorityLevelConfigurations = defineKind<PriorityLevelConfiguration>({
  ...{},
  ...RESOURCES.prioritylevelconfigurations,
  subresources: ['status'],
  keptOnStatusUpdate: STATUS_ONLY_METADATA,
  columns: [
    computed('Type', (level) => level.spec?.type ?? ''),
    computed('NominalConcurrencyShares', (level) => limitedCell(level, (l) => l.nominalConcurrencyShares)),
    computed('Queues', (level) => limitedCell(level, (l) => l.limitResponse?.queuing?.queues)),
    computed('HandSize', (level) => limitedCell(level, (l) => l.limitResponse?.queuing?.handSize)),
    computed('QueueLengthLimit', (level) => limitedCell(level, (l) => l.limitResponse?.queuing?.queueLengthLimit)),
    AGE_COLUMN,
  ],
  strategy: {
    defaults(level) {
      const spec = level.spec;
      if (spec?.exempt) {
        spec.exempt.nominalConcurrencyShares ??= 0;
        spec.exempt.lendablePercent ??= 0;
      }
      const limited = spec?.limited;
      if (!limited) return;
      limited.nominalConcurrencyShares ??= DEFAULT_NOMINAL_SHARES;
      limited.lendablePercent ??= 0;
      const queuing = limited.limitResponse?.queuing;
      if (queuing) {
        if (!queuing.queues) queuing.queues = DEFAULT_QUEUING.queues;
        if (!queuing.handSize) queuing.handSize = DEFAULT_QUEUING.handSize;
        if (!queuing.queueLengthLimit) queuing.queueLengthLimit = DEFAULT_QUEUING.queueLengthLimit;
      }
    },
    validate: validatePriorityLevel,
  },
});

/**
 * flowcontrol.apiserver.k8s.io/v1beta3, served from the stored v1 objects (the same fields): what clients built
 * with Kubernetes 1.26–1.28 libraries watch, e.g. an extension API server's priority-and-fairness informers,
 * which keep it unready until they have synced.
 */
const V1BETA3 = 'flowcontrol.apiserver.k8s.io/v1beta3';
const V1 = 'flowcontrol.apiserver.k8s.io/v1';
const PRESERVE_ZERO = 'flowcontrol.k8s.io/v1beta3-preserve-zero';

export const flowSchemasV1beta3 = defineKind<FlowSchema>({
  ...{},
  ...RESOURCES.flowschemas,
  version: 'v1beta3',
  subresources: ['status'],
  keptOnStatusUpdate: STATUS_ONLY_METADATA,
  conversion: { toStorage: (object) => ({ ...{}, ...object, apiVersion: V1 }), fromStorage: (object) => ({ ...{}, ...object, apiVersion: V1BETA3 }) },
});

export const priorityLevelConfigurationsV1beta3 = defineKind<PriorityLevelConfiguration>({
  ...{},
  ...RESOURCES.prioritylevelconfigurations,
  version: 'v1beta3',
  subresources: ['status'],
  keptOnStatusUpdate: STATUS_ONLY_METADATA,
  conversion: {
    // In v1beta3 a zero nominalConcurrencyShares means the default (30), unless the object says to keep the zero.
    toStorage(object) {
      const level = structuredClone(object) as PriorityLevelConfiguration;
      const limited = level.spec?.limited;
      if (limited?.nominalConcurrencyShares === 0 && level.metadata.annotations?.[PRESERVE_ZERO] !== 'true') delete limited.nominalConcurrencyShares;
      return { ...{}, ...level, apiVersion: V1 };
    },
    fromStorage: (object) => ({ ...{}, ...object, apiVersion: V1BETA3 }),
  },
});

export const FLOWCONTROL_KINDS: ResourceDefinition[] = [flowSchemas, priorityLevelConfigurations, flowSchemasV1beta3, priorityLevelConfigurationsV1beta3];
