// JSON Patch (RFC 6902), `application/json-patch+json`: what `kubectl rollout undo` and
// `kubectl patch --type=json` send. Operations apply in order to a private copy, so a failing operation
// leaves nothing half-applied.
//
// Errors follow the API server: a patch that cannot be decoded (not an array, unknown op, missing
// `value`/`from`, bad pointer) is 400 BadRequest; more than 10,000 operations is 413; a well-formed patch that
// does not apply to this object (missing path, index out of range, failed `test`) is 422 Invalid. Messages
// name the operation and path.
//
// Budgets: `copy` is the one operation that multiplies work (copying a value into itself doubles the document),
// so the bytes copies add are counted before each copy is made (Kubernetes' JSONPatchMaxCopyBytes), and the
// document's size is kept up to date as operations apply: the first operation that takes it past the object
// limit stops the patch (413) before anything larger is built. A result nested deeper than the body limit is
// refused too, since later steps walk objects recursively.

import { ApiError, errors } from '../errors.js';
import { errorMessage } from '../guards.js';
import { MAX_NESTING_DEPTH, nestingDepth } from '../limits.js';
import { cloneJson, getOwn, isJsonObject, jsonEqual, setOwn, type JsonObject } from './json.js';
import { parseJsonPointer } from './json-pointer.js';
import { jsonByteLength, MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS, MAX_OBJECT_BYTES } from './limits.js';

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

function decode(operations: unknown, maxOperations: number): DecodedOperation[] {
  if (!Array.isArray(operations)) throw errors.badRequest('invalid json patch: the patch must be a JSON array of operations');
  if (operations.length > maxOperations) {
    throw errors.requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${maxOperations}, got ${operations.length}`);
  }
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

/** What one JSON patch may cost; every field defaults to the API server's limit. */
export interface JsonPatchLimits {
  /** Operations in the patch (default {@link MAX_JSON_PATCH_OPERATIONS}). */
  maxOperations?: number;
  /** Bytes all `copy` operations together may add (default {@link MAX_JSON_PATCH_COPY_BYTES}). */
  maxCopyBytes?: number;
  /**
   * Bytes of compact JSON the document may reach while the patch applies (default {@link MAX_OBJECT_BYTES}; a
   * document already larger may keep its size but not grow).
   */
  maxDocumentBytes?: number;
  /** Levels of objects and arrays the result may nest (default {@link MAX_NESTING_DEPTH}). */
  maxDepth?: number;
}

/** The operations' running costs: the document's JSON size and the bytes copied so far. */
class Budget {
  private copied = 0;
  private readonly maxDocumentBytes: number;

  constructor(
    private size: number,
    private readonly limits: Required<JsonPatchLimits>,
  ) {
    this.maxDocumentBytes = Math.max(limits.maxDocumentBytes, size);
  }

  /** Counts a value (and its member name, when it sits in an object) entering the document. */
  added(value: unknown, key: string | undefined, operation: DecodedOperation, path: string): void {
    this.size += jsonByteLength(value) + placeBytes(key);
    this.check(operation, path);
  }

  /** Counts a value leaving the document. Each value leaves once, so these walks never add up to more than went in. */
  removed(value: unknown, key: string | undefined): void {
    this.size -= jsonByteLength(value) + placeBytes(key);
  }

  /** A value moving from one place to another: only its member name counts. */
  moved(from: string | undefined, to: string | undefined, operation: DecodedOperation, path: string): void {
    this.size += placeBytes(to) - placeBytes(from);
    this.check(operation, path);
  }

  /**
   * Checks, before anything is copied, that copying `value` stays within the copy budget and, placed at `tokens`,
   * within the depth limit. Measuring stops at the remaining budget, so a refused copy costs no more than that.
   */
  beforeCopy(value: unknown, tokens: readonly string[], operation: DecodedOperation, path: string): void {
    const remaining = this.limits.maxCopyBytes - this.copied;
    const bytes = jsonByteLength(value, remaining);
    if (bytes > remaining) {
      throw doesNotApply(
        operation,
        path,
        `copying "${operation.fromPath}" would take the bytes copied by this patch past the limit of ${this.limits.maxCopyBytes}`,
      );
    }
    this.copied += bytes;
    // A value nests no deeper than its size in bytes, so this walk is within the copy budget too.
    if (tokens.length + nestingDepth(value, this.limits.maxDepth) > this.limits.maxDepth) {
      throw doesNotApply(operation, path, `the result would nest objects or arrays more than ${this.limits.maxDepth} levels deep`);
    }
  }

  private check(operation: DecodedOperation, path: string): void {
    if (this.size > this.maxDocumentBytes) {
      throw errors.requestEntityTooLarge(
        `json patch ${operation.op} operation ${operation.index} at "${path}" takes the object past the limit of ${this.maxDocumentBytes} bytes`,
      );
    }
  }
}

/** The bytes a value's place adds: `"name":` in an object, a comma in an array. */
function placeBytes(key: string | undefined): number {
  return key === undefined ? 1 : jsonByteLength(key) + 2;
}

/** The member name a pointer's last token names; undefined for an array position or the whole document. */
function memberName(document: unknown, tokens: readonly string[]): string | undefined {
  if (tokens.length === 0) return undefined;
  const parent = resolve(document, tokens.slice(0, -1)).value;
  return isJsonObject(parent) ? tokens[tokens.length - 1] : undefined;
}

/** What an add at `tokens` replaces: an existing member, or the whole document; nothing for an array insert. */
function displaced(document: unknown, tokens: readonly string[], key: string | undefined): { found: boolean; value: unknown } {
  if (tokens.length > 0 && key === undefined) return { found: false, value: undefined };
  return resolve(document, tokens);
}

/** An add (also the second half of copy and move) with its effect on the document's size counted. */
function addCounted(
  document: unknown,
  tokens: string[],
  value: unknown,
  operation: DecodedOperation,
  budget: Budget,
  movedFrom?: { key: string | undefined },
): unknown {
  const { path } = operation;
  const key = memberName(document, tokens);
  const replaced = displaced(document, tokens, key);
  const result = add(document, tokens, value, operation, path);
  if (replaced.found) budget.removed(replaced.value, key);
  if (movedFrom) budget.moved(movedFrom.key, key, operation, path);
  else budget.added(value, key, operation, path);
  return result;
}

function applyOperation(document: unknown, operation: DecodedOperation, budget: Budget): unknown {
  const { op, tokens, path } = operation;
  switch (op) {
    case 'add':
      return addCounted(document, tokens, cloneJson(operation.value), operation, budget);
    case 'remove': {
      const key = memberName(document, tokens);
      budget.removed(remove(document, tokens, operation, path), key);
      return document;
    }
    case 'replace': {
      const value = cloneJson(operation.value);
      const replaced = resolve(document, tokens);
      const result = replace(document, tokens, value, operation, path);
      budget.removed(replaced.value, undefined);
      budget.added(value, undefined, operation, path);
      return result;
    }
    case 'test': {
      const { found, value } = resolve(document, tokens);
      if (!found) throw doesNotApply(operation, path, `"${path}" does not exist`);
      if (!jsonEqual(value, operation.value)) throw doesNotApply(operation, path, `the value at "${path}" is not the expected value`);
      return document;
    }
    case 'copy': {
      const source = resolve(document, operation.from);
      if (!source.found) throw doesNotApply(operation, operation.fromPath, `"${operation.fromPath}" does not exist`);
      budget.beforeCopy(source.value, tokens, operation, path);
      return addCounted(document, tokens, cloneJson(source.value), operation, budget);
    }
    case 'move': {
      if (isProperPrefix(operation.from, tokens)) {
        throw doesNotApply(operation, path, `"${operation.fromPath}" cannot be moved into its own child "${path}"`);
      }
      if (!resolve(document, operation.from).found) {
        throw doesNotApply(operation, operation.fromPath, `"${operation.fromPath}" does not exist`);
      }
      const key = memberName(document, operation.from);
      const value = remove(document, operation.from, operation, operation.fromPath);
      return addCounted(document, tokens, value, operation, budget, { key });
    }
  }
}

/**
 * Applies an RFC 6902 JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`; `-` appends to an
 * array). Returns a new document sharing nothing with the inputs; neither input is modified. `limits` bound
 * the work (see {@link JsonPatchLimits}): more operations than allowed, or a document growing past its limit,
 * is a 413; copies past the copy budget, or a result nested too deeply, a 422.
 */
export function applyJsonPatch<T extends object>(target: T, operations: unknown, limits: JsonPatchLimits = {}): T {
  const bounds: Required<JsonPatchLimits> = {
    maxOperations: limits.maxOperations ?? MAX_JSON_PATCH_OPERATIONS,
    maxCopyBytes: limits.maxCopyBytes ?? MAX_JSON_PATCH_COPY_BYTES,
    maxDocumentBytes: limits.maxDocumentBytes ?? MAX_OBJECT_BYTES,
    maxDepth: limits.maxDepth ?? MAX_NESTING_DEPTH,
  };
  const decoded = decode(operations, bounds.maxOperations);
  let document: unknown = cloneJson(target);
  const budget = new Budget(jsonByteLength(document), bounds);
  for (const operation of decoded) document = applyOperation(document, operation, budget);
  // Moves can deepen the document without copying anything: checked once, without recursion, on the result.
  if (nestingDepth(document, bounds.maxDepth) > bounds.maxDepth) {
    const message = `the patched object nests objects or arrays more than ${bounds.maxDepth} levels deep`;
    throw new ApiError('SKIFF_ERR_API_INVALID', message, { causes: [{ type: 'FieldValueInvalid', field: 'patch', message }] });
  }
  return document as T;
}
