// The `authorizer` variable of policy expressions (upstream's authz CEL library): build a check —
// `authorizer.group('apps').resource('deployments').namespace('prod').check('delete')`,
// `authorizer.path('/metrics').check('get')`, `authorizer.serviceAccount(ns, name)…` to ask for another
// identity, `authorizer.requestResource` for the request's own resource — then read the decision with
// `allowed()`, `reason()`, `errored()`, `error()`. Checks go to the cluster's `authorize` hook.
//
// Evaluation is synchronous and authorizers are not: a check whose decision is not known yet answers "not
// allowed" and is noted; the dispatcher asks the authorizers for every noted check and evaluates the policy
// again, until an evaluation needs no new decision (see AuthorizationChecks).
import { celMethod, CelScalar, type CelFunc } from '@bufbuild/cel';
import type { UserInfo } from '@skiff/api';
import { meter } from '@skiff/plugin-apiextensions/cel';
import type { AuthzAttributes, AuthzDecision } from '@skiff/kernel';

/** What one check costs: upstream's figure, which lets two checks into one expression's per-call limit. */
const AUTHZ_CHECK_COST = 350_000;

const CEL_MAP = Symbol.for('@bufbuild/cel/map');

interface DecisionResult {
  allowed: boolean;
  reason: string;
  error?: string;
}

/** Decisions asked during one request, shared by every policy; the checks an evaluation needed but found undecided. */
export class AuthorizationChecks {
  private readonly decisions = new Map<string, DecisionResult>();
  private readonly pending = new Map<string, AuthzAttributes>();

  constructor(private readonly authorize: (attributes: AuthzAttributes) => Promise<AuthzDecision>) {}

  /** The decision for `attributes`, or undefined (and the check noted) when it has not been asked yet. */
  decide(attributes: AuthzAttributes): DecisionResult | undefined {
    const key = JSON.stringify(attributes);
    const known = this.decisions.get(key);
    if (!known) this.pending.set(key, attributes);
    return known;
  }

  /** Whether the last evaluation met checks that have no decision yet. */
  get undecided(): boolean {
    return this.pending.size > 0;
  }

  /** Asks the authorizers about every noted check. */
  async resolve(): Promise<void> {
    const asked = [...this.pending];
    this.pending.clear();
    await Promise.all(
      asked.map(async ([key, attributes]) => {
        try {
          const decision = await this.authorize(attributes);
          this.decisions.set(key, { allowed: decision?.decision === 'allow', reason: decision?.reason ?? '' });
        } catch (err) {
          this.decisions.set(key, { allowed: false, reason: '', error: err instanceof Error ? err.message : String(err) });
        }
      }),
    );
  }

  /** Gives up on checks still undecided: they read as errors. */
  abandon(): void {
    for (const key of this.pending.keys())
      this.decisions.set(key, { allowed: false, reason: '', error: 'authorization checks depend on each other too deeply' });
    this.pending.clear();
  }
}

/** Values of the library pass through the evaluator as (empty) CEL maps; their methods do the work. */
abstract class LibraryValue {
  readonly [CEL_MAP] = {};
  get size(): number {
    return 0;
  }
  get(_key: unknown): unknown {
    return undefined;
  }
  has(key: unknown): boolean {
    return this.get(key) !== undefined;
  }
  keys(): IterableIterator<string> {
    return [][Symbol.iterator]();
  }
  *entries(): IterableIterator<[string, unknown]> {}
  *values(): IterableIterator<unknown> {}
  forEach(): void {}
  [Symbol.iterator](): IterableIterator<[string, unknown]> {
    return this.entries();
  }
}

interface ResourceAttributes {
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export class Authorizer extends LibraryValue {
  constructor(
    readonly checks: AuthorizationChecks,
    readonly user: UserInfo,
    private readonly request?: ResourceAttributes,
  ) {
    super();
  }

  override get(key: unknown): unknown {
    return key === 'requestResource' && this.request ? new ResourceCheck(this, this.request) : undefined;
  }
}

class GroupCheck extends LibraryValue {
  constructor(
    readonly authorizer: Authorizer,
    readonly group: string,
  ) {
    super();
  }
}

class ResourceCheck extends LibraryValue {
  constructor(
    readonly authorizer: Authorizer,
    readonly attributes: ResourceAttributes,
  ) {
    super();
  }
}

class PathCheck extends LibraryValue {
  constructor(
    readonly authorizer: Authorizer,
    readonly path: string,
  ) {
    super();
  }
}

class Decision extends LibraryValue {
  constructor(readonly result: DecisionResult) {
    super();
  }
}

/** The `authorizer` of a request by `user` on `request` (the resource it names, for `authorizer.requestResource`). */
export function authorizerFor(checks: AuthorizationChecks, user: UserInfo, request: ResourceAttributes): Authorizer {
  return new Authorizer(checks, user, request);
}

function as<T>(value: unknown, type: abstract new (...args: never[]) => T): T {
  if (!(value instanceof type)) throw new Error('no such overload');
  return value;
}

/** Before an authorizer has answered, a check reads as not allowed; the evaluation is run again once it has. */
const UNDECIDED: DecisionResult = { allowed: false, reason: '' };

function check(authorizer: Authorizer, attributes: AuthzAttributes): Decision {
  meter().use(AUTHZ_CHECK_COST - 1);
  return new Decision(authorizer.checks.decide(attributes) ?? UNDECIDED);
}

const { DYN, STRING, BOOL } = CelScalar;
type Attribute = 'subresource' | 'namespace' | 'name';
const resourceSetter = (field: Attribute) =>
  celMethod(field, DYN, [STRING], DYN, function (value: string) {
    const rc = as(this, ResourceCheck);
    return new ResourceCheck(rc.authorizer, { ...{}, ...rc.attributes, [field]: value }) as never;
  });

/** The library's functions, added to the rule library for policy expressions. */
export const AUTHORIZER_FUNCTIONS: CelFunc[] = [
  celMethod('group', DYN, [STRING], DYN, function (group: string) {
    return new GroupCheck(as(this, Authorizer), group) as never;
  }),
  celMethod('path', DYN, [STRING], DYN, function (path: string) {
    return new PathCheck(as(this, Authorizer), path) as never;
  }),
  celMethod('serviceAccount', DYN, [STRING, STRING], DYN, function (namespace: string, name: string) {
    const authorizer = as(this, Authorizer);
    const user = { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
    return new Authorizer(authorizer.checks, user) as never;
  }),
  celMethod('resource', DYN, [STRING], DYN, function (resource: string) {
    const gc = as(this, GroupCheck);
    return new ResourceCheck(gc.authorizer, { group: gc.group, resource, subresource: '', namespace: '', name: '' }) as never;
  }),
  resourceSetter('subresource'),
  resourceSetter('namespace'),
  resourceSetter('name'),
  celMethod('check', DYN, [STRING], DYN, function (verb: string) {
    if (this instanceof PathCheck) {
      const { authorizer, path } = this;
      return check(authorizer, {
        user: authorizer.user,
        verb,
        isResourceRequest: false,
        apiGroup: '',
        apiVersion: '',
        resource: '',
        subresource: '',
        namespace: '',
        name: '',
        path,
      }) as never;
    }
    const { authorizer, attributes } = as(this, ResourceCheck);
    return check(authorizer, {
      user: authorizer.user,
      verb,
      isResourceRequest: true,
      apiGroup: attributes.group,
      apiVersion: '*',
      resource: attributes.resource,
      subresource: attributes.subresource,
      namespace: attributes.namespace,
      name: attributes.name,
      path: '',
    }) as never;
  }),
  celMethod('allowed', DYN, [], BOOL, function () {
    return as(this, Decision).result.allowed;
  }),
  celMethod('reason', DYN, [], STRING, function () {
    return as(this, Decision).result.reason;
  }),
  celMethod('errored', DYN, [], BOOL, function () {
    return as(this, Decision).result.error !== undefined;
  }),
  celMethod('error', DYN, [], STRING, function () {
    return as(this, Decision).result.error ?? '';
  }),
];
