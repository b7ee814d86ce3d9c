import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Services hold the rules; they talk to the outside only through the interfaces they are given.
    files: ['src/services/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: ['fastify', 'kysely', 'sharp', 'onnxruntime-node', 'node:fs', 'fs', 'node:fs/promises'], patterns: [{ group: ['**/http/**'], message: 'Domain types live in src/domain.' }] },
      ],
    },
  },
  {
    // Below http: the domain, the pipeline, adapters and the worker import no HTTP module.
    files: ['src/domain/**/*.ts', 'src/pipeline/**/*.ts', 'src/adapters/**/*.ts', 'src/jobs/**/*.ts', 'src/db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/**'], message: 'Domain types live in src/domain.' }] }] },
  },
  {
    // Tests read loosely typed JSON answers; `any` there is deliberate.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', performance: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
  },
);
