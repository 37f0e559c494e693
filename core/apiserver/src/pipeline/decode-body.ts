import { cloneJsonValue, errorMessage, errors } from '@skiff/api';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE, WireError } from '@skiff/api/protobuf';
import { NumberLiterals } from '@skiff/api/schema';
import { LineCounter, parseDocument } from 'yaml';
import { duplicateJsonFields, duplicateYamlKeys, type RepeatedField, type RepeatedFields } from './duplicate-fields.js';
import { assertJsonNesting, assertWellFormedValue, assertYamlNesting, bodyText } from './body-limits.js';

export const MEDIA_TYPE = Object.freeze({
  JSON: 'application/json',
  YAML: 'application/yaml',
  MERGE_PATCH: 'application/merge-patch+json',
  STRATEGIC_MERGE_PATCH: 'application/strategic-merge-patch+json',
  JSON_PATCH: 'application/json-patch+json',
  APPLY_PATCH: 'application/apply-patch+yaml',
});

const JSON_TYPES = new Set<string>([MEDIA_TYPE.JSON, MEDIA_TYPE.MERGE_PATCH, MEDIA_TYPE.STRATEGIC_MERGE_PATCH, MEDIA_TYPE.JSON_PATCH]);
const YAML_TYPES = new Set<string>([MEDIA_TYPE.YAML, MEDIA_TYPE.APPLY_PATCH]);

export interface DecodedBody {
  /** The media type without parameters; application/json when the request named none. */
  mediaType: string;
  /** The parsed body; undefined for an empty body. */
  value: unknown;
  /**
   * Fields a JSON or YAML body repeats within one object (computed when asked: only field validation needs
   * them), and whether Kubernetes reads the body with its YAML decoder (YAML media types, JSON text included).
   */
  duplicateFields?: () => RepeatedFields;
  /**
   * How a JSON body wrote the numbers JSON.parse cannot tell apart (`1e3`, `1.0`), by their path in the object
   * the body becomes (computed once, when the type check asks). Only for the media types whose values reach
   * Go's typed decoder as written: JSON, merge patches and JSON patches; strategic merge patches and YAML
   * bodies go through a generic map in Kubernetes too, where 1e3 is just 1000.
   */
  numberLiterals?: () => NumberLiterals | undefined;
}

/** What the type check learns from a body's text besides its value. */
export type BodyFacts = Pick<DecodedBody, 'duplicateFields' | 'numberLiterals'>;

/** The media type of a Content-Type header, lower-case and without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  if (!contentType) return MEDIA_TYPE.JSON;
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * Parses a request body by its Content-Type. Over HTTP the body is a Buffer: it must be UTF-8, nest at
 * most MAX_NESTING_DEPTH levels (checked on the text, before parsing) and hold well-formed strings.
 * The loopback transport hands over an object, which is cloned because the pipeline fills it in and
 * the caller may still hold it. Protobuf bodies of built-in kinds are decoded to the same JSON form.
 */
export function decodeBody(body: unknown, contentType: string | undefined): DecodedBody {
  const mediaType = mediaTypeOf(contentType);
  if (body === undefined || body === null) return { mediaType, value: undefined };
  if (!Buffer.isBuffer(body) && typeof body !== 'string') {
    assertWellFormedValue(body);
    return { mediaType, value: cloneJsonValue(body) };
  }
  if (mediaType === PROTOBUF_MEDIA_TYPE) return { mediaType, value: parseProtobuf(body) };
  const isJson = JSON_TYPES.has(mediaType);
  if (!isJson && !YAML_TYPES.has(mediaType)) throw errors.unsupportedMediaType(contentType ?? '');
  const text = bodyText(body);
  if (text.trim() === '') return { mediaType, value: undefined };
  const yamlDuplicates: RepeatedField[] = [];
  const value = isJson ? parseJson(text) : parseYamlOrJson(text, yamlDuplicates);
  assertWellFormedValue(value);
  const parsedAsJson = isJson || text.trimStart().startsWith('{');
  const decoded: DecodedBody = {
    mediaType,
    value,
    duplicateFields: once((): RepeatedFields => ({ decoder: isJson ? 'json' : 'yaml', fields: parsedAsJson ? duplicateJsonFields(text) : yamlDuplicates })),
  };
  if (isJson && mediaType !== MEDIA_TYPE.STRATEGIC_MERGE_PATCH) decoded.numberLiterals = once(() => literalsOf(text, mediaType, value));
  return decoded;
}

function literalsOf(text: string, mediaType: string, value: unknown): NumberLiterals | undefined {
  const literals = NumberLiterals.scan(text);
  if (!literals || mediaType !== MEDIA_TYPE.JSON_PATCH) return literals;
  return literals.movedByJsonPatch(value);
}

function once<T>(compute: () => T): () => T {
  let done = false;
  let result: T;
  return () => {
    if (!done) {
      result = compute();
      done = true;
    }
    return result;
  };
}

/**
 * kubectl 1.32 and later send built-in kinds as protobuf: the envelope names the kind, the facts table
 * generated from upstream's .proto files says how to read it, and the result is the object's JSON form.
 */
function parseProtobuf(body: Buffer | string): unknown {
  if (typeof body === 'string') throw errors.badRequest('a protobuf request body must be binary');
  if (body.length === 0) return undefined;
  try {
    const value = decodeProtobufObject(body);
    assertWellFormedValue(value);
    return value;
  } catch (err) {
    if (err instanceof WireError) throw errors.badRequest(`the request body is not valid protobuf: ${err.message}`);
    throw err;
  }
}

function parseJson(text: string): unknown {
  assertJsonNesting(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.badRequest(`the request body is not valid JSON: ${errorMessage(err)}`);
  }
}

/** kubectl sends apply patches as JSON (which is YAML too); JSON.parse is much faster, so try it first. */
function parseYamlOrJson(text: string, duplicates: RepeatedField[]): unknown {
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    assertJsonNesting(text);
    try {
      return JSON.parse(text);
    } catch {
      // Flow-style YAML also starts with a brace; let the YAML parser decide.
    }
  }
  assertYamlNesting(text);
  try {
    // Merge keys (`<<: *defaults`) as Kubernetes' YAML 1.1 decoder has them; repeated keys kept (the last wins, as in JSON) and reported.
    const lineCounter = new LineCounter();
    const document = parseDocument(text, { uniqueKeys: false, merge: true, lineCounter });
    duplicates.push(...duplicateYamlKeys(document.contents, lineCounter));
    if (document.errors.length > 0) throw document.errors[0];
    return document.toJS();
  } catch (err) {
    throw errors.badRequest(`the request body is not valid YAML: ${errorMessage(err)}`);
  }
}
