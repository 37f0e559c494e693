// Typed lookups over api-facts.json, the table generated from upstream's API definitions by
// scripts/generate-api-facts.mjs (docs/api-facts.md). The table is data only; this file adds indexes.
import table from './api-facts.json' with { type: 'json' };
import { deepFreeze } from '../freeze.js';

/** A field of a message. Keys other than name, number and type are present only when they say something. */
export interface ApiFieldFacts {
  /** The JSON name (for an `inline` or `notInJson` field, which has none, the proto name). */
  readonly name: string;
  /** The proto field name, where it differs from the JSON name (`Expression` for `expression`). */
  readonly protoName?: string;
  readonly number: number;
  /** A scalar type (`string`, `int32`, `int64`, `bool`, `bytes`, `double`…) or a message's full name; for a map, the value type. */
  readonly type: string;
  readonly repeated?: true;
  /** A map: its key and value types (on the wire, repeated entries with fields 1 and 2). */
  readonly map?: { readonly key: string; readonly value: string };
  /** Embedded in Go with `json:",inline"`: the JSON object holds this message's fields directly. */
  readonly inline?: true;
  /** `json:"-"`: carried in protobuf only (the raw bytes of RawExtension and FieldsV1). */
  readonly notInJson?: true;
  /** The Go field is a pointer (`*T`): unset and zero differ, and an unset one is left out of JSON when `omitEmpty`. */
  readonly pointer?: true;
  /**
   * `omitempty` in the Go JSON tag: Go leaves the field out of JSON when it is false, 0, "", an unset pointer, or an
   * empty list or map — never when it is a struct value (hence `resources: {}`). Without it, Go always writes the field.
   */
  readonly omitEmpty?: true;
  readonly omitZero?: true;
  /** The `+enum` string type the field (or, for a list, each item) holds: a key of the enum table. */
  readonly enum?: string;
  readonly optional?: true;
  readonly required?: true;
  /** `+default`, as a JSON value (`ref(Constant)` resolved to the constant's value). */
  readonly default?: unknown;
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
  readonly patchMergeKey?: string;
  /** `merge`, `replace`, `retainKeys`, or a comma-separated combination (`merge,retainKeys`). */
  readonly patchStrategy?: string;
  readonly mapType?: 'atomic' | 'granular';
  readonly structType?: 'atomic' | 'granular';
  readonly featureGates?: readonly string[];
  readonly oneOf?: string;
  readonly zeroOrOneOf?: string;
  readonly unionDiscriminator?: true;
}

export interface ApiMessageFacts {
  /** The full proto name, e.g. `k8s.io.api.core.v1.Pod`. */
  readonly name: string;
  /** The proto package, a key of the package table. */
  readonly package: string;
  readonly structType?: 'atomic' | 'granular';
  readonly union?: true;
  /** From `+k8s:supportsSubresource`, where upstream's proto carries it (e.g. `/status`, `/approval`). */
  readonly supportsSubresources?: readonly string[];
  /** A named Go slice (`type ExtraValue []string`): the JSON form is the array held in the `items` field. */
  readonly sliceWrapper?: true;
  /** In field-number order. */
  readonly fields: readonly ApiFieldFacts[];
}

export interface ApiPackageFacts {
  /** The proto package, e.g. `k8s.io.api.apps.v1`. */
  readonly name: string;
  /** The Go module it comes from: `k8s.io/api` or `k8s.io/apimachinery`. */
  readonly module: string;
  /** Its directory in that module, e.g. `apps/v1`. */
  readonly path: string;
  readonly goPackage?: string;
  /** The API group (`""` for the core group); absent for packages that are not an API group (resource, intstr, runtime). */
  readonly group?: string;
  readonly version?: string;
}

export interface ApiFactsSource {
  readonly module: string;
  readonly tag: string;
  readonly commit: string;
}

interface FactsFile {
  sources: ApiFactsSource[];
  packages: Record<string, Omit<ApiPackageFacts, 'name'>>;
  messages: Record<string, Omit<ApiMessageFacts, 'name'>>;
  enums: Record<string, string[]>;
}

const facts = table as unknown as FactsFile;

interface MessageIndex {
  readonly message: ApiMessageFacts;
  readonly byNumber: ReadonlyMap<number, ApiFieldFacts>;
  /** JSON keys, inlined members' keys included. */
  readonly byJsonName: ReadonlyMap<string, ApiFieldFacts>;
}

const indexes = new Map<string, MessageIndex>();

function indexOf(fullName: string, inlining: readonly string[] = []): MessageIndex | undefined {
  const cached = indexes.get(fullName);
  if (cached) return cached;
  if (!Object.hasOwn(facts.messages, fullName) || inlining.includes(fullName)) return undefined;
  const message: ApiMessageFacts = deepFreeze({ name: fullName, ...facts.messages[fullName] });
  const byJsonName = new Map<string, ApiFieldFacts>();
  for (const field of message.fields) {
    if (field.notInJson) continue;
    if (field.inline) {
      const inlined = indexOf(field.type, [...inlining, fullName]);
      for (const [name, member] of inlined?.byJsonName ?? []) if (!byJsonName.has(name)) byJsonName.set(name, member);
    } else byJsonName.set(field.name, field);
  }
  const index = { message, byNumber: new Map(message.fields.map((field) => [field.number, field])), byJsonName };
  indexes.set(fullName, index);
  return index;
}

/** The message with this full proto name (`k8s.io.api.core.v1.Pod`). Shaped so it serves as the protobuf codec's message lookup. */
export function messageFacts(fullName: string): ApiMessageFacts | undefined {
  return indexOf(fullName)?.message;
}

/**
 * The field a JSON key of the message stands for. The keys of an inlined member count as the message's
 * own (Volume's `emptyDir` is VolumeSource's field); inline and JSON-less fields have no key of their own.
 */
export function fieldByJsonName(messageName: string, jsonName: string): ApiFieldFacts | undefined {
  return indexOf(messageName)?.byJsonName.get(jsonName);
}

export function fieldByNumber(messageName: string, number: number): ApiFieldFacts | undefined {
  return indexOf(messageName)?.byNumber.get(number);
}

/** Every message's full name, sorted. */
export function messageNames(): readonly string[] {
  return Object.keys(facts.messages);
}

/** Messages of one proto package (`k8s.io.api.apps.v1`), sorted by name. */
export function messagesOfPackage(packageName: string): readonly ApiMessageFacts[] {
  const prefix = `${packageName}.`;
  return messageNames()
    .filter((name) => name.startsWith(prefix) && facts.messages[name].package === packageName)
    .flatMap((name) => messageFacts(name) ?? []);
}

export function packageFacts(packageName: string): ApiPackageFacts | undefined {
  if (!Object.hasOwn(facts.packages, packageName)) return undefined;
  return deepFreeze({ name: packageName, ...facts.packages[packageName] });
}

/** The proto package holding one API group version (`''` and `v1` for the core group). */
export function packageOfGroupVersion(group: string, version: string): ApiPackageFacts | undefined {
  const name = Object.keys(facts.packages).find((key) => facts.packages[key].group === group && facts.packages[key].version === version);
  return name === undefined ? undefined : packageFacts(name);
}

/** The values of an `+enum` string type, by the name a field's `enum` holds (`k8s.io.api.core.v1.RestartPolicy`). */
export function enumValues(enumName: string): readonly string[] | undefined {
  return Object.hasOwn(facts.enums, enumName) ? deepFreeze(facts.enums[enumName]) : undefined;
}

/** The upstream modules, tags and commits the table was generated from. */
export function apiFactsSources(): readonly ApiFactsSource[] {
  return deepFreeze(facts.sources);
}
