// Lint for the whole monorepo: `npm run lint` (with scripts/check-cycles.mjs for import cycles).
// typescript-eslint's recommended rules and the layering the architecture promises (docs/contributing.md, "Layers"): the kernel and the
// object model depend on nothing of ours but each other, core packages never reach into plugins,
// and no package imports another package's files by path — only its public entry.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Above the store and the client: the components, and what is built from them. */
const COMPONENTS = ['@skiff/apiserver', '@skiff/controller-manager', '@skiff/scheduler', '@skiff/kubelet', '@skiff/cli'];
const PLUGINS_AND_PRESETS = ['@skiff/plugin-*', '@skiff/preset-*'];
const ABOVE_KERNEL = ['@skiff/store', '@skiff/client', ...COMPONENTS, '@skiff/testing', ...PLUGINS_AND_PRESETS];

/** Packages a layer may not import, by the folder its files live in. */
const LAYERS = [
  {
    files: ['core/*/src/**/*.ts'],
    ignores: ['core/*/src/**/*.test.ts', 'core/*/src/test-support/**', 'core/testing/src/**', 'core/cli/src/**'],
    forbidden: PLUGINS_AND_PRESETS,
    why: 'core packages never depend on plugins or presets; plugins hook into them',
  },
  // The more specific layers come later: the last matching entry sets the rule.
  {
    files: ['core/api/src/**/*.ts'],
    forbidden: ['@skiff/kernel', ...ABOVE_KERNEL],
    why: '@skiff/api is the object model: it depends on no other Skiff package',
  },
  { files: ['core/kernel/src/**/*.ts'], forbidden: ABOVE_KERNEL, why: 'the kernel knows no component: it depends on @skiff/api only' },
  {
    files: ['core/store/src/**/*.ts', 'core/client/src/**/*.ts'],
    forbidden: [...COMPONENTS, ...PLUGINS_AND_PRESETS],
    why: 'the store and the client sit below the components',
  },
];

const deepImports = {
  group: ['@skiff/*/src/*', '@skiff/*/dist/*', '**/plugins/*/src/*', '../../*/src/*', '../../../*/src/*'],
  message: "import another package through its public entry ('@skiff/x'), never its files",
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'core/cli/templates/**', '**/*.d.mts', '.vitest-results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        globalThis: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      'no-restricted-imports': ['error', { patterns: [deepImports] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  ...LAYERS.map(({ files, ignores, forbidden, why }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': ['error', { patterns: [deepImports, { group: forbidden, message: why }] }],
    },
  })),
  {
    // Node 20's V8, once a function is optimized, gives an object literal that starts with a spread and goes on
    // with more members a map of its own on every call: ~1 µs per member after the spread, and every later
    // property read of that object is megamorphic. Starting the literal with `...{}` keeps one map.
    // docs/contributing.md, "Object spread", has the measurements. A plugin's `...packageInfo(…)` runs once at load.
    files: ['core/*/src/**/*.ts', 'plugins/*/src/**/*.ts', 'presets/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-support/**', '**/test-support.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'ObjectExpression[properties.length>1] > SpreadElement:first-child:not([argument.type="ObjectExpression"][argument.properties.length=0]):not([argument.callee.name="packageInfo"])',
          message: 'start an object literal that spreads and then goes on with `...{}` (Node 20 gives it a new map every call): `{ ...{}, ...base, key }`',
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
