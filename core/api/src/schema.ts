// @skiff/api/schema: the schema language (t.*, decodeObject, toOpenApiSchema), the schemas of the built-in kinds
// and the API facts they are made from.
export * from './schemas/index.js';
export * from './generated/facts.js';
