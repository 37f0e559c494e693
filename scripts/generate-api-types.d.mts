export interface ServedResource {
  resource: string;
  shortNames: string[];
  group: string;
  version: string;
  namespaced: boolean;
  kind: string;
  categories: string[];
}
export const OUTPUTS: Readonly<{ types: string; resources: string }>;
export function readServedResources(text: string): ServedResource[];
export function generate(facts: unknown, served: ServedResource[]): { types: string; resources: string };
export function generatedFiles(): Promise<{ types: string; resources: string }>;
