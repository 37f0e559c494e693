/** The names a new plugin package goes by, all derived from the NAME given to `skiff new`. */
export interface PluginNames {
  /** The short name as given, without scope or prefix: "deny-label". */
  name: string;
  /** The npm package name, which is also the plugin's name: "skiff-plugin-deny-label" or "@acme/skiff-plugin-deny-label". */
  packageName: string;
  /** The folder written: "skiff-plugin-deny-label". */
  folder: string;
  /** PascalCase, for names inside the cluster that Kubernetes writes that way (scheduler plugins): "DenyLabel". */
  pascalName: string;
  /** The scope without its `@`, if any: "acme". */
  scope?: string;
}

export const PACKAGE_PREFIX = 'skiff-plugin-';

/** Lower-case words of letters and digits joined by single dashes, starting with a letter: safe on npm and as a folder. */
const WORDS = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/** npm's limit on a whole package name. */
const MAX_PACKAGE_NAME = 214;

/**
 * Reads NAME as `skiff new` takes it: `deny-label`, `skiff-plugin-deny-label` (the prefix is not doubled) or
 * `@scope/deny-label`. Throws an Error whose message is the one line to show.
 */
export function pluginNames(input: string): PluginNames {
  const scoped = /^@([^/]*)\/(.*)$/.exec(input);
  const scope = scoped?.[1];
  let name = scoped ? scoped[2]! : input;
  if (name.startsWith(PACKAGE_PREFIX)) name = name.slice(PACKAGE_PREFIX.length);
  if (scope !== undefined && !WORDS.test(scope)) {
    throw new Error(`scope "@${scope}" must be lower-case letters, digits and dashes, starting with a letter (e.g. "@acme/deny-label")`);
  }
  if (!WORDS.test(name)) {
    throw new Error(`plugin name "${input}" must be lower-case letters, digits and dashes, starting with a letter (e.g. "deny-label")`);
  }
  const folder = `${PACKAGE_PREFIX}${name}`;
  const packageName = scope === undefined ? folder : `@${scope}/${folder}`;
  if (packageName.length > MAX_PACKAGE_NAME)
    throw new Error(`plugin name "${input}" is too long: npm package names have at most ${MAX_PACKAGE_NAME} characters`);
  return {
    name,
    packageName,
    folder,
    pascalName: name
      .split('-')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join(''),
    ...(scope === undefined ? {} : { scope }),
  };
}
