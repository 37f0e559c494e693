// The `Webhook` conversion strategy: an object not already in the wanted version is sent to the CRD's webhook in a
// ConversionReview, and what comes back is checked against the original before it is used.
import { randomUUID } from 'node:crypto';
import { isJsonObject, type KubeObject, type WebhookConversion } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { checkSameObject, convertedObjects, restoreMetadata, reviewRequest, reviewVersionOf, type ReviewVersion } from './review.js';
import { ConversionTransport } from './transport.js';

/** How Go prints an object's GroupVersionKind: `group/version, Kind=Kind`. */
function gvkOf(object: KubeObject): string {
  return `${object.apiVersion ?? ''}, Kind=${object.kind ?? ''}`;
}

export class WebhookConverter {
  private readonly transport: ConversionTransport;
  private readonly reviewVersion: ReviewVersion;

  constructor(webhook: WebhookConversion, client: ApiClient) {
    this.reviewVersion = reviewVersionOf(webhook.conversionReviewVersions);
    this.transport = new ConversionTransport(webhook.clientConfig ?? {}, client);
  }

  close(): void {
    this.transport.close();
  }

  /**
   * `object` as `apiVersion` (as it is when already in it); an Error worded as kube-apiserver's when the webhook
   * fails or answers wrong.
   */
  async convert(object: KubeObject, apiVersion: string): Promise<KubeObject> {
    if (object.apiVersion === apiVersion) return object;
    const what = gvkOf(object);
    const uid = randomUUID();
    let converted: unknown[];
    try {
      const answer = await this.transport.post(JSON.stringify(reviewRequest(this.reviewVersion, uid, apiVersion, [object])));
      converted = convertedObjects(this.reviewVersion, uid, answer);
    } catch (err) {
      throw new Error(`conversion webhook for ${what} failed: ${(err as Error).message}`);
    }
    if (converted.length !== 1) throw new Error(`conversion webhook for ${what} returned ${converted.length} objects, expected 1`);
    const result = converted[0];
    if (!isJsonObject(result))
      throw new Error(`conversion webhook for ${what} returned invalid object at index 0: Object 'Kind' is missing in converted object`);
    const got = typeof result.apiVersion === 'string' ? result.apiVersion : '';
    if (got !== apiVersion)
      throw new Error(`conversion webhook for ${what} returned invalid object at index 0: invalid groupVersion (expected ${apiVersion}, received ${got})`);
    if (result.kind !== object.kind)
      throw new Error(
        `conversion webhook for ${what} returned invalid object at index 0: invalid kind (expected ${object.kind}, received ${String(result.kind ?? '')})`,
      );
    try {
      checkSameObject(object, result as KubeObject);
    } catch (err) {
      throw new Error(`conversion webhook for ${what} returned invalid object: ${(err as Error).message}`);
    }
    try {
      return restoreMetadata(object, result);
    } catch (err) {
      throw new Error(`conversion webhook for ${what} returned invalid metadata: ${(err as Error).message}`);
    }
  }
}
