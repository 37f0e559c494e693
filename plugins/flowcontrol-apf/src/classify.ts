import type { FlowcontrolV1Subject, FlowSchema, NonResourcePolicyRule, ResourcePolicyRule } from '@skiff/api';
import type { FlowControlRequest } from '@skiff/kernel';

/** The FlowSchema a request matched and the part of its flow identifier the schema's distinguisher adds. */
export interface Match {
  flowSchema: FlowSchema;
  /** The user name (ByUser), the namespace (ByNamespace), or "" (no distinguisher). */
  distinguisher: string;
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** FlowSchemas in the order they are tried: ascending matchingPrecedence, then name. */
export function inMatchingOrder(flowSchemas: readonly FlowSchema[]): FlowSchema[] {
  return [...flowSchemas].sort(
    (a, b) => (a.spec.matchingPrecedence ?? 1000) - (b.spec.matchingPrecedence ?? 1000) || a.metadata.name!.localeCompare(b.metadata.name!),
  );
}

/** The first of `ordered` (see inMatchingOrder) whose rules match the request. */
export function classify(ordered: readonly FlowSchema[], request: FlowControlRequest): Match | undefined {
  for (const flowSchema of ordered) {
    if (!matchesSchema(flowSchema, request)) continue;
    const method = flowSchema.spec.distinguisherMethod?.type;
    const distinguisher = method === 'ByUser' ? request.user.username : method === 'ByNamespace' ? request.namespace : '';
    return { flowSchema, distinguisher };
  }
  return undefined;
}

export function matchesSchema(flowSchema: FlowSchema, request: FlowControlRequest): boolean {
  return (flowSchema.spec.rules ?? []).some(
    (rules) =>
      rules.subjects.some((subject) => matchesSubject(subject, request.user.username, request.user.groups)) &&
      (request.isResourceRequest
        ? (rules.resourceRules ?? []).some((rule) => matchesResourceRule(rule, request))
        : (rules.nonResourceRules ?? []).some((rule) => matchesNonResourceRule(rule, request))),
  );
}

export function matchesSubject(subject: FlowcontrolV1Subject, username: string, groups: readonly string[]): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.user?.name === '*' || subject.user?.name === username;
    case 'Group':
      return subject.group?.name === '*' || (subject.group !== undefined && groups.includes(subject.group.name));
    case 'ServiceAccount': {
      const account = subject.serviceAccount;
      if (!account || !username.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const [namespace, name, ...extra] = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
      return extra.length === 0 && namespace === account.namespace && (account.name === '*' || account.name === name);
    }
    default:
      return false;
  }
}

const anyOf = (values: readonly string[] | undefined, value: string): boolean => values !== undefined && (values.includes('*') || values.includes(value));

export function matchesResourceRule(rule: ResourcePolicyRule, request: FlowControlRequest): boolean {
  if (!anyOf(rule.verbs, request.verb) || !anyOf(rule.apiGroups, request.apiGroup)) return false;
  const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  if (!anyOf(rule.resources, resource)) return false;
  // A request with no namespace (cluster-scoped objects, lists across all namespaces) needs clusterScope.
  return request.namespace === '' ? rule.clusterScope === true : anyOf(rule.namespaces, request.namespace);
}

export function matchesNonResourceRule(rule: NonResourcePolicyRule, request: FlowControlRequest): boolean {
  return anyOf(rule.verbs, request.verb) && rule.nonResourceURLs.some((pattern) => matchesPath(pattern, request.path));
}

/** `*` matches any path, `/prefix/*` the paths under `/prefix/`, anything else only itself. */
function matchesPath(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true;
  return pattern.endsWith('/*') && path.startsWith(pattern.slice(0, -1));
}
