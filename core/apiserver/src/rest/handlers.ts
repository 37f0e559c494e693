import type { ApiResponse, ResourceDefinition } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import type { RestContext } from './context.js';

/** A kind's own behaviour for one verb of the kind or one of its subresources: pods/binding, a review kind's create. */
export type KindHandler = (ctx: RestContext, body: DecodedBody) => Promise<ApiResponse>;

/**
 * The handlers kinds register beside their definitions (kinds/index.ts). The request path finds them by
 * group, resource, subresource and verb — it never names a kind itself.
 */
export class KindHandlers {
  private readonly byKey = new Map<string, KindHandler>();

  register(target: { group: string; resource: string; subresource?: string; verb: string }, handler: KindHandler): this {
    this.byKey.set(key(target.group, target.resource, target.subresource ?? '', target.verb), handler);
    return this;
  }

  find(definition: Pick<ResourceDefinition, 'group' | 'resource'>, subresource: string, verb: string): KindHandler | undefined {
    return this.byKey.get(key(definition.group, definition.resource, subresource, verb));
  }
}

function key(group: string, resource: string, subresource: string, verb: string): string {
  return `${group}/${resource}/${subresource} ${verb}`;
}
