/** One upstream module's files at a tag, paths relative to the module root. */
export interface ModuleFiles {
  module: string;
  tag: string;
  commit: string;
  protoFiles: { path: string; text: string }[];
  goFiles: { path: string; text: string }[];
}

/** A field or message record of the table: the keys docs/api-facts.md lists, each present only when it says something. */
export type FactsRecord = Record<string, unknown>;

export interface FactsTable {
  sources: { module: string; tag: string; commit: string }[];
  packages: Record<string, { module: string; path: string; goPackage?: string; group?: string; version?: string }>;
  messages: Record<string, { package: string; fields: ({ name: string; number: number; type: string } & FactsRecord)[] } & FactsRecord>;
  enums: Record<string, string[]>;
}

export interface FactsStats {
  packages: number;
  messages: number;
  fields: number;
  goTagged: number;
  renamed: number;
  inline: number;
  enumFields: number;
  enums: number;
}

export class FactsError extends Error {}

export const DEFAULT_OUTPUT: string;
export const MODULES: readonly { module: string; flag: string; env: string; exclude?: RegExp }[];

/** The facts table from each module's files (no git, no file system): what the command writes, before formatting. */
export function buildFacts(modules: ModuleFiles[]): { facts: FactsTable; stats: FactsStats };
/** Whether the generator reads a Go file (sources only: no tests, no generated code). */
export function isGoSource(path: string): boolean;
/** Reads the generated.proto files and the Go sources beside them from a git directory at a tag. */
export function readModuleAtTag(source: { module: string; exclude?: RegExp }, gitDir: string, tag: string): ModuleFiles;
/** The table as committed, formatted with the repository's Prettier settings. */
export function formatFacts(facts: FactsTable): Promise<string>;
