// Schemas built from the generated API facts (api-facts.json): every message of upstream's API
// definitions becomes an ObjectSchema with its JSON field names, Go types and markers — nothing about a
// kind's shape is written by hand. Built lazily and cached; recursive types (JSONSchemaProps) share
// one object.
import {
  enumValues,
  fieldByJsonName,
  messageFacts,
  packageFacts,
  packageOfGroupVersion,
  type ApiFieldFacts,
  type ApiMessageFacts,
} from '../generated/facts.js';
import { emptyDictionary } from './dictionary.js';
import { t, type ObjectSchema, type Schema } from './language.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Messages with a JSON form of their own (custom marshalling in Go), by full proto name. */
const SPECIAL: Record<string, () => Schema> = {
  'k8s.io.apimachinery.pkg.api.resource.Quantity': () => t.quantity(),
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': () => t.intOrString(),
  [`${META}.Time`]: () => t.time(),
  [`${META}.MicroTime`]: () => t.time({ goType: 'v1.MicroTime' }),
  [`${META}.Duration`]: () => t.string({ goType: 'v1.Duration' }),
  [`${META}.FieldsV1`]: () => t.any({ goType: 'v1.FieldsV1', openapi: { type: 'object' } }),
  'k8s.io.apimachinery.pkg.runtime.RawExtension': () => t.any({ goType: 'runtime.RawExtension', openapi: { type: 'object' } }),
};

/** apiextensions' free-form JSON types: any JSON value (schemas of schemas). */
const FREE_FORM =
  /^k8s\.io\.apiextensions_apiserver\.pkg\.apis\.apiextensions\.v1(beta1)?\.(JSON|JSONSchemaPropsOrArray|JSONSchemaPropsOrBool|JSONSchemaPropsOrStringArray)$/;

const cache = new Map<string, Schema>();

/** The OpenAPI package of a proto package: its Go import path with the domain reversed (`io.k8s.api.core.v1`). */
function openApiPackageOf(message: ApiMessageFacts): string {
  const goPackage = packageFacts(message.package)?.goPackage ?? message.package;
  return goPackage.replace(/^k8s\.io\//, 'io.k8s.').replaceAll('/', '.');
}

/** `k8s.io.api.core.v1.RestartPolicy` → `v1.RestartPolicy`, as Go names the type in errors. */
function goTypeOfEnum(enumName: string): string {
  const parts = enumName.split('.');
  return parts.slice(-2).join('.');
}

/** Go structs that embed metav1.TypeMeta: the kinds and lists (a `metadata` field), less the templates that only carry ObjectMeta. */
function carriesTypeMeta(message: ApiMessageFacts): boolean {
  const shortName = message.name.slice(message.name.lastIndexOf('.') + 1);
  if (shortName === 'DeleteOptions' || shortName === 'Status') return true;
  if (/TemplateSpec$|^PersistentVolumeClaimTemplate$/.test(shortName)) return false;
  return message.fields.some((field) => field.name === 'metadata' && (field.type === `${META}.ObjectMeta` || field.type === `${META}.ListMeta`));
}

function scalarSchema(type: string, field?: ApiFieldFacts): Schema | undefined {
  const enumType = field?.enum;
  switch (type) {
    case 'string': {
      if (!enumType) return t.string();
      const values = enumValues(enumType);
      return t.string({ goType: goTypeOfEnum(enumType), ...(values ? { enum: values } : {}) });
    }
    case 'bytes':
      return t.string({ goType: '[]uint8', format: 'byte' });
    case 'int32':
    case 'uint32':
    case 'sint32':
    case 'fixed32':
      return t.int32();
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
      return t.int64();
    case 'double':
    case 'float':
      return t.number();
    case 'bool':
      return t.boolean();
    default:
      return undefined;
  }
}

/** The schema of a value of a proto type (a scalar, or a message by full name). */
function typeSchema(type: string, field?: ApiFieldFacts): Schema {
  return scalarSchema(type, field) ?? messageSchema(type);
}

function fieldSchema(field: ApiFieldFacts): Schema {
  if (field.map) return t.map(typeSchema(field.map.value));
  const item = typeSchema(field.type, field);
  return field.repeated ? t.array(item) : item;
}

/**
 * The schema of one message by full proto name (`k8s.io.api.apps.v1.DeploymentSpec`). Kinds and lists
 * gain `apiVersion` and `kind` (metav1.TypeMeta, which the .proto files leave out); inlined members'
 * fields are the message's own; JSON-less fields are absent.
 */
export function messageSchema(fullName: string): Schema {
  const cached = cache.get(fullName);
  if (cached) return cached;
  const special = SPECIAL[fullName];
  if (special) return remember(fullName, special());
  if (FREE_FORM.test(fullName)) return remember(fullName, t.any({ goType: fullName.slice(fullName.lastIndexOf('.', fullName.lastIndexOf('.') - 1) + 1) }));
  const message = messageFacts(fullName);
  if (!message) throw new Error(`no API facts for message ${fullName}`);
  const shortName = fullName.slice(fullName.lastIndexOf('.') + 1);
  if (message.sliceWrapper) {
    const items = message.fields.find((field) => field.name === 'items');
    return remember(fullName, t.array(items ? typeSchema(items.type, items) : t.any(), { goType: `${goTypeOfEnum(fullName)}` }));
  }
  const fields = emptyDictionary<Schema>();
  const fieldFacts = emptyDictionary<ApiFieldFacts>();
  const required: string[] = [];
  const schema: ObjectSchema = {
    kind: 'object',
    name: shortName,
    package: openApiPackageOf(message),
    fields,
    fieldFacts,
  };
  if (message.structType) schema.structType = message.structType;
  remember(fullName, schema);
  if (carriesTypeMeta(message)) {
    fields.apiVersion = t.string();
    fields.kind = t.string();
  }
  addFields(fullName, message, { fields, fieldFacts, required }, []);
  if (required.length > 0) schema.required = required;
  Object.freeze(fields);
  return schema;
}

/** What an object schema is built from, filled in field by field (inlined members' fields included). */
interface FieldsUnderConstruction {
  fields: Record<string, Schema>;
  fieldFacts: Record<string, ApiFieldFacts>;
  required: string[];
}

function addFields(fullName: string, message: ApiMessageFacts, target: FieldsUnderConstruction, inlining: string[]): void {
  const { fields, fieldFacts: facts, required } = target;
  for (const field of message.fields) {
    if (field.notInJson) continue;
    if (field.inline) {
      const inlined = messageFacts(field.type);
      if (inlined && !inlining.includes(field.type)) addFields(field.type, inlined, target, [...inlining, fullName]);
      continue;
    }
    if (Object.hasOwn(fields, field.name)) continue;
    fields[field.name] = fieldSchema(field);
    facts[field.name] = fieldByJsonName(fullName, field.name) ?? field;
    if (field.required) required.push(field.name);
  }
}

function remember(fullName: string, schema: Schema): Schema {
  cache.set(fullName, schema);
  return schema;
}

/** The schema of a kind upstream defines (`apps`, `v1`, `Deployment`), tagged with its group/version/kind; undefined if there is none. */
export function kindSchema(group: string, version: string, kind: string): ObjectSchema | undefined {
  const pkg = packageOfGroupVersion(group, version);
  if (!pkg || !messageFacts(`${pkg.name}.${kind}`)) return undefined;
  const schema = messageSchema(`${pkg.name}.${kind}`);
  if (schema.kind !== 'object') return undefined;
  schema.gvk ??= { group, version, kind };
  return schema;
}
