// Merge rules read from a kind's schema — the `+patchStrategy`/`+patchMergeKey` (and for server-side apply
// the `+listType`/`+listMapKey`) markers of the generated API facts — instead of a hand-kept table.
import type { Schema } from '../schemas/language.js';
import type { CompiledMergeKeys, ListMergeRule } from './merge-keys.js';

function step(schema: Schema | undefined, segment: string): Schema | undefined {
  const list = segment.endsWith('[]');
  const name = list ? segment.slice(0, -2) : segment;
  let child: Schema | undefined;
  if (schema?.kind === 'object') child = schema.fields[name];
  else if (schema?.kind === 'map') child = schema.values;
  if (list) return child?.kind === 'array' ? child.items : undefined;
  return child;
}

const cache = new WeakMap<Schema, { patch: CompiledMergeKeys; apply: CompiledMergeKeys }>();

/**
 * The merge rules of a kind. For strategic merge patches, lists merge as their patch strategy says; for
 * server-side apply (`forApply`), lists keyed by one `+listMapKey` and `+listType=set` lists merge too.
 */
export function schemaMergeKeys(schema: Schema, forApply = false): CompiledMergeKeys {
  let entry = cache.get(schema);
  if (!entry) {
    const build = (apply: boolean): CompiledMergeKeys => ({
      ruleFor(parentPath, field): ListMergeRule | undefined {
        let owner: Schema | undefined = schema;
        for (const segment of parentPath) {
          owner = step(owner, segment);
          if (!owner) return undefined;
        }
        if (owner.kind !== 'object') return undefined;
        const facts = owner.fieldFacts?.[field];
        if (!facts) return undefined;
        if (facts.patchStrategy?.split(',').includes('merge')) return facts.patchMergeKey ? { mergeKey: facts.patchMergeKey } : 'merge';
        if (apply && facts.listType === 'map' && facts.listMapKeys?.length === 1) return { mergeKey: facts.listMapKeys[0]! };
        if (apply && facts.listType === 'set') return 'merge';
        return undefined;
      },
    });
    entry = { patch: build(false), apply: build(true) };
    cache.set(schema, entry);
  }
  return forApply ? entry.apply : entry.patch;
}
