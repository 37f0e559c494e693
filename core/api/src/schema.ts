// The schema language (t.*, decodeObject, toOpenApiSchema) and the schemas of the built-in kinds.
export * from './schemas/index.js';
