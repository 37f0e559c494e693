/** What `skiff new` can write: one example plugin per kind, each in core/cli/templates/<kind>. */
export const PLUGIN_KINDS = Object.freeze({
  admission: {
    summary: 'mutate and validate taps: new pods must carry a label',
    description: 'A Skiff admission plugin: new pods must carry a label',
    area: 'admission',
    /** Skiff packages the plugin imports at run time besides @skiff/kernel: the cluster provides them, so they are peers. */
    runtimePeers: [] as string[],
  },
  scheduler: {
    summary: 'a scheduler filter and score: pods prefer nodes with a label',
    description: 'A Skiff scheduler plugin: pods prefer nodes that carry a label',
    area: 'scheduler',
    runtimePeers: [] as string[],
  },
  authenticator: {
    summary: 'an authenticate tap: API keys in a request header',
    description: 'A Skiff authenticator: API keys in a request header',
    area: 'authn',
    runtimePeers: [] as string[],
  },
  authorizer: {
    summary: 'an authorize tap: members of a group may only read',
    description: 'A Skiff authorizer: members of a group may only read',
    area: 'authz',
    runtimePeers: [] as string[],
  },
  controller: {
    summary: 'a control loop: warns about pods with unpinned image tags',
    description: 'A Skiff controller: warns about pods that run images by a tag that can move',
    area: 'controller',
    runtimePeers: ['@skiff/api'],
  },
});

export type PluginKind = keyof typeof PLUGIN_KINDS;

/** Other words people use for a kind: the area names of Skiff's own plugin packages. */
const ALIASES: Readonly<Record<string, PluginKind>> = Object.freeze({ authn: 'authenticator', authz: 'authorizer' });

function isPluginKind(word: string): word is PluginKind {
  return Object.hasOwn(PLUGIN_KINDS, word);
}

/** The kind `word` names, or an Error whose message is the one line to show. */
export function pluginKind(word: string): PluginKind {
  if (isPluginKind(word)) return word;
  if (Object.hasOwn(ALIASES, word)) return ALIASES[word]!;
  throw new Error(`unknown plugin kind "${word}" (kinds: ${Object.keys(PLUGIN_KINDS).join(', ')})`);
}
