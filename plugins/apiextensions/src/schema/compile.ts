// compileSchema: one CRD version's schema turned into the pruner, defaulter and validator the custom
// resource handler calls on every request.
import type { StatusCause } from '@skiff/api';
import { compileRules } from './cel/compile.js';
import { validateRules } from './cel/validate.js';
import { defaultObject } from './defaults.js';
import { validateListTypes } from './list-types.js';
import { compileNode, type SchemaNode } from './node.js';
import { validateOpenAPI } from './openapi.js';
import { pruneObject } from './prune.js';
import { DEFAULT_CEL_BUDGET, DEFAULT_CEL_CALL_LIMIT, type CompileOptions, type CompiledSchema, type JSONSchemaProps } from './types.js';

/** Compiles the CEL rules of `node` and every node below it; returns whether any rule was found. */
export function attachRules(node: SchemaNode, isRoot: boolean): boolean {
  node.rules = compileRules(node, isRoot);
  let below = node.rules.length > 0;
  const children = [
    ...(node.properties?.values() ?? []),
    ...(typeof node.additional === 'object' ? [node.additional] : []),
    ...(node.items ? [node.items] : []),
  ];
  for (const child of children) below = attachRules(child, false) || below;
  node.rulesBelow = below;
  return below;
}

/** Precomputes everything a CRD version's schema needs per request: nodes, patterns, formats, CEL programs. */
export function compileSchema(schema: JSONSchemaProps, options: CompileOptions = {}): CompiledSchema {
  const root = compileNode(schema);
  attachRules(root, true);
  const budget = options.celBudget ?? DEFAULT_CEL_BUDGET;
  const perCallLimit = options.celCallLimit ?? DEFAULT_CEL_CALL_LIMIT;
  return {
    prune: (object) => pruneObject(object, root),
    applyDefaults: (object) => defaultObject(object, root),
    validate(object, old): StatusCause[] {
      const causes = validateOpenAPI(root, object);
      if (root.listTypesBelow && (old === undefined || validateListTypes(root, old).length === 0)) causes.push(...validateListTypes(root, object));
      causes.push(...validateRules(root, object, old, budget, { perCallLimit }));
      return causes;
    },
  };
}
