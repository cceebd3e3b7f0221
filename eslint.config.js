// Lint for src/, test/, bench/ and codegen/: typescript-eslint's recommended rules (the syntactic
// set, so the lint runs in seconds without type information), `any` refused in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Node's globals for the plain JavaScript files (TypeScript files get them from @types/node).
const nodeGlobals = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'queueMicrotask', 'structuredClone', 'AbortController', 'TextEncoder', 'TextDecoder', 'SharedArrayBuffer', 'Atomics'].map((g) => [g, 'readonly']),
);

export default tseslint.config(
  {
    // src/protocol/generated is codegen's output, held to its generator by the regeneration test.
    ignores: ['dist/**', 'node_modules/**', '.cache/**', 'data/**', 'test/interop/java/**', 'src/protocol/generated/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,mts,js,mjs,cjs}'],
    languageOptions: { globals: nodeGlobals },
  },
  {
    rules: {
      // A leading underscore marks a binding kept for its position (destructuring, callbacks).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // A rethrown failure names its cause in its message; KafkaError takes { cause } where the chain is wanted.
      'preserve-caught-error': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...nodeGlobals, module: 'writable', require: 'readonly', __dirname: 'readonly' } },
  },
);
