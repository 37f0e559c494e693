// ConfigMaps and Secrets: keyed data, which may be frozen with `immutable`.
import { defineKind, RESOURCES, type ConfigMap, type Secret, type StatusCause } from '@skiff/api';
import { fieldErrors, validateImmutable } from '@skiff/api/validation';
import { AGE_COLUMN, column, computed } from '../columns.js';

type DataHolder = ConfigMap | Secret;

/** The keys of a data map; none for a value that is not a map. */
const keysOf = (map: unknown): string[] => (map && typeof map === 'object' ? Object.keys(map) : []);

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** IsConfigMapKey: the keys of data and binaryData. */
function validateKeys<T extends DataHolder>(object: T, fields: (keyof T & string)[]): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  for (const field of fields) {
    for (const key of keysOf(object[field])) {
      const problems: string[] = [];
      if (key.length > 253) problems.push('must be no more than 253 characters');
      if (!CONFIG_KEY.test(key))
        problems.push(
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        );
      if (key === '.' || key === '..') problems.push(`must not be '${key}'`);
      for (const problem of problems) causes.push(fieldErrors.invalid(`${field}[${key}]`, key, problem));
      if (seen.has(key)) causes.push(fieldErrors.invalid(`${field}[${key}]`, key, 'duplicate of key present in data'));
      seen.add(key);
    }
  }
  return causes;
}

const MAX_DATA_BYTES = 1024 * 1024;

/** The data of an immutable ConfigMap or Secret never changes, and it never becomes mutable again. */
function validateImmutableData<T extends DataHolder>(object: T, old: T | undefined, fields: (keyof T & string)[]): StatusCause[] {
  if (!old || old.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (object.immutable !== true) causes.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const field of fields) {
    if (JSON.stringify(object[field] ?? {}) !== JSON.stringify(old[field] ?? {}))
      causes.push(fieldErrors.forbidden(field, 'field is immutable when `immutable` is set'));
  }
  return causes;
}

export const configMaps = defineKind<ConfigMap>({
  ...{},
  ...RESOURCES.configmaps,
  columns: [computed<ConfigMap>('Data', (cm) => keysOf(cm.data).length + keysOf(cm.binaryData).length, { type: 'integer' }), AGE_COLUMN],
  strategy: {
    validate(cm, old) {
      const size = JSON.stringify(cm.data ?? {}).length + JSON.stringify(cm.binaryData ?? {}).length;
      return [
        ...validateKeys(cm, ['data', 'binaryData']),
        ...(size > MAX_DATA_BYTES ? [fieldErrors.tooLong('', MAX_DATA_BYTES)] : []),
        ...validateImmutableData(cm, old, ['data', 'binaryData']),
      ];
    },
  },
});

/** The keys each built-in Secret type must hold. */
const SECRET_TYPE_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

export const secrets = defineKind<Secret>({
  ...{},
  ...RESOURCES.secrets,
  columns: [column('Type', '.type'), computed<Secret>('Data', (secret) => keysOf(secret.data).length, { type: 'integer' }), AGE_COLUMN],
  strategy: {
    // stringData is write-only: merged into data (base64) and dropped, the way Kubernetes' conversion does.
    defaults(secret) {
      secret.type ??= 'Opaque';
      if (secret.stringData && typeof secret.stringData === 'object') {
        const data: Record<string, string> = { ...secret.data };
        for (const [key, value] of Object.entries(secret.stringData)) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
        secret.data = data;
      }
      delete secret.stringData;
    },
    validate(secret, old) {
      const causes = validateKeys(secret, ['data']);
      const type = secret.type ?? '';
      const has = (key: string) => keysOf(secret.data).includes(key);
      for (const key of SECRET_TYPE_KEYS[type] ?? []) if (!has(key)) causes.push(fieldErrors.required(`data[${key}]`));
      if (type === 'kubernetes.io/service-account-token' && !secret.metadata.annotations?.['kubernetes.io/service-account.name']) {
        causes.push(fieldErrors.required('metadata.annotations[kubernetes.io/service-account.name]'));
      }
      if (type === 'kubernetes.io/basic-auth' && !has('username') && !has('password')) {
        causes.push(fieldErrors.required('data[username]'));
      }
      if (old) causes.push(...validateImmutable(secret.type ?? '', old.type ?? '', 'type'));
      causes.push(...validateImmutableData(secret, old, ['data']));
      return causes;
    },
  },
});
