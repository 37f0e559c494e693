// JSON Patch (RFC 6902), `application/json-patch+json`: what `kubectl rollout undo` and
// `kubectl patch --type=json` send. Operations apply in order to a private copy, so a failing operation
// leaves nothing half-applied.
//
// Errors follow the API server: a patch that cannot be decoded (not an array, unknown op, missing
// `value`/`from`, bad pointer) is 400 BadRequest; a well-formed patch that does not apply to this object
// (missing path, index out of range, failed `test`) is 422 Invalid. Messages name the operation and path.

import { ApiError, errors } from '../errors.js';
import { errorMessage } from '../guards.js';
import { cloneJson, getOwn, isJsonObject, jsonEqual, setOwn, type JsonObject } from './json.js';
import { parseJsonPointer } from './json-pointer.js';

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; path: string; from: string };

interface DecodedOperation {
  index: number;
  op: JsonPatchOperation['op'];
  path: string;
  tokens: string[];
  value: unknown;
  fromPath: string;
  from: string[];
}

const OPERATIONS: readonly JsonPatchOperation['op'][] = ['add', 'remove', 'replace', 'move', 'copy', 'test'];

function isOperation(op: unknown): op is JsonPatchOperation['op'] {
  return OPERATIONS.some((known) => known === op);
}

const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function pointer(text: unknown, what: string, index: number): string[] {
  if (typeof text !== 'string') throw errors.badRequest(`invalid json patch: operation ${index} needs a string "${what}"`);
  try {
    return parseJsonPointer(text);
  } catch (err) {
    throw errors.badRequest(`invalid json patch: operation ${index}: ${errorMessage(err)}`);
  }
}

function decode(operations: unknown): DecodedOperation[] {
  if (!Array.isArray(operations)) throw errors.badRequest('invalid json patch: the patch must be a JSON array of operations');
  return operations.map((raw, index) => {
    if (!isJsonObject(raw)) throw errors.badRequest(`invalid json patch: operation ${index} is not an object`);
    const op = getOwn(raw, 'op');
    if (!isOperation(op)) {
      throw errors.badRequest(`invalid json patch: operation ${index} has unknown op ${JSON.stringify(op ?? null)}`);
    }
    const tokens = pointer(getOwn(raw, 'path'), 'path', index);
    const needsValue = op === 'add' || op === 'replace' || op === 'test';
    if (needsValue && !Object.hasOwn(raw, 'value')) throw errors.badRequest(`invalid json patch: ${op} operation ${index} needs a "value"`);
    const needsFrom = op === 'move' || op === 'copy';
    const from = needsFrom ? pointer(getOwn(raw, 'from'), 'from', index) : [];
    return {
      index,
      op,
      path: raw.path as string,
      tokens,
      value: getOwn(raw, 'value'),
      fromPath: needsFrom ? (raw.from as string) : '',
      from,
    };
  });
}

/** A 422 naming the operation, as the API server answers for a patch that does not apply. */
function doesNotApply(operation: DecodedOperation, path: string, reason: string): ApiError {
  const message = `json patch ${operation.op} operation ${operation.index} does not apply: ${reason}`;
  return new ApiError('SKIFF_ERR_API_INVALID', message, { causes: [{ type: 'FieldValueInvalid', field: path, message }] });
}

type Container = JsonObject | unknown[];

/** Follows `tokens` from `document`; undefined when any step is missing. */
function resolve(document: unknown, tokens: readonly string[]): { found: boolean; value: unknown } {
  let current = document;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(token) || Number(token) >= current.length) return { found: false, value: undefined };
      current = current[Number(token)];
    } else if (isJsonObject(current) && Object.hasOwn(current, token)) {
      current = current[token];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: current };
}

/** The container holding the last token of `tokens`, or a 422 when it does not exist. */
function parentOf(document: unknown, tokens: readonly string[], operation: DecodedOperation, path: string): Container {
  const { found, value } = resolve(document, tokens.slice(0, -1));
  if (!found || !(Array.isArray(value) || isJsonObject(value))) throw doesNotApply(operation, path, `the parent of "${path}" does not exist`);
  return value;
}

/** An array position: an index below `limit`, or (when `allowEnd`) `-` for "after the last element". */
function arrayIndex(array: unknown[], token: string, allowEnd: boolean, operation: DecodedOperation, path: string): number {
  if (allowEnd && token === '-') return array.length;
  const limit = allowEnd ? array.length : array.length - 1;
  if (!ARRAY_INDEX.test(token) || Number(token) > limit) {
    throw doesNotApply(operation, path, `"${path}" is not a valid index into an array of ${array.length}`);
  }
  return Number(token);
}

function add(document: unknown, tokens: string[], value: unknown, operation: DecodedOperation, path: string): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, operation, path);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true, operation, path), 0, value);
  else setOwn(parent, last, value);
  return document;
}

function remove(document: unknown, tokens: string[], operation: DecodedOperation, path: string): unknown {
  if (tokens.length === 0) throw doesNotApply(operation, path, 'the whole document cannot be removed');
  const parent = parentOf(document, tokens, operation, path);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const removed = parent.splice(arrayIndex(parent, last, false, operation, path), 1);
    return removed[0];
  }
  if (!Object.hasOwn(parent, last)) throw doesNotApply(operation, path, `"${path}" does not exist`);
  const removed = parent[last];
  delete parent[last];
  return removed;
}

function replace(document: unknown, tokens: string[], value: unknown, operation: DecodedOperation, path: string): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, operation, path);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) parent[arrayIndex(parent, last, false, operation, path)] = value;
  else if (Object.hasOwn(parent, last)) setOwn(parent, last, value);
  else throw doesNotApply(operation, path, `"${path}" does not exist`);
  return document;
}

function isProperPrefix(prefix: readonly string[], tokens: readonly string[]): boolean {
  return prefix.length < tokens.length && prefix.every((token, i) => token === tokens[i]);
}

function applyOperation(document: unknown, operation: DecodedOperation): unknown {
  const { op, tokens, path } = operation;
  switch (op) {
    case 'add':
      return add(document, tokens, cloneJson(operation.value), operation, path);
    case 'remove':
      remove(document, tokens, operation, path);
      return document;
    case 'replace':
      return replace(document, tokens, cloneJson(operation.value), operation, path);
    case 'test': {
      const { found, value } = resolve(document, tokens);
      if (!found) throw doesNotApply(operation, path, `"${path}" does not exist`);
      if (!jsonEqual(value, operation.value)) throw doesNotApply(operation, path, `the value at "${path}" is not the expected value`);
      return document;
    }
    case 'copy': {
      const source = resolve(document, operation.from);
      if (!source.found) throw doesNotApply(operation, operation.fromPath, `"${operation.fromPath}" does not exist`);
      return add(document, tokens, cloneJson(source.value), operation, path);
    }
    case 'move': {
      if (isProperPrefix(operation.from, tokens)) {
        throw doesNotApply(operation, path, `"${operation.fromPath}" cannot be moved into its own child "${path}"`);
      }
      if (!resolve(document, operation.from).found) {
        throw doesNotApply(operation, operation.fromPath, `"${operation.fromPath}" does not exist`);
      }
      const value = remove(document, operation.from, operation, operation.fromPath);
      return add(document, tokens, value, operation, path);
    }
  }
}

/**
 * Applies an RFC 6902 JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`; `-` appends to an
 * array). Returns a new document sharing nothing with the inputs; neither input is modified.
 */
export function applyJsonPatch<T extends object>(target: T, operations: unknown): T {
  const decoded = decode(operations);
  let document: unknown = cloneJson(target);
  for (const operation of decoded) document = applyOperation(document, operation);
  return document as T;
}
