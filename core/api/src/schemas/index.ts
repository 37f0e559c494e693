export * from './language.js';
export { DECODE_CAUSE, decodeFailure, decodeFailureMessage, decodeObject, type DecodeOptions, type DecodeResult } from './decode.js';
export { openApiComponentName, toOpenApiComponents, toOpenApiSchema, type OpenApiOptions, type OpenApiSchema } from './openapi.js';
export { kindSchema, messageSchema } from './from-facts.js';
export { NumberLiterals, type ValuePath } from './number-literals.js';
