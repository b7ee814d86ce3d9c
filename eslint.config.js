import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * A folder of src/ and the folders it must not import from (and packages, for the services): the
 * architecture's direction, enforced rather than remembered.
 */
function layer(folder, forbidden, message, packages = []) {
  return {
    files: [`${folder}/**/*.ts`, `${folder}/**/*.mjs`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: packages.map((name) => ({ name, message })),
          patterns: [{ group: forbidden.map((f) => `**/${f}/**`), message }],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'studio/dist/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  // The direction of imports: main → http → services → (pipeline, repositories, adapters) → domain.
  // Each folder names what it must not import; see layer() above and the README's architecture map.
  layer(
    'src/domain',
    ['http', 'services', 'pipeline', 'background', 'db', 'adapters', 'imaging', 'runtime', 'presets'],
    'The domain is the bottom layer: schemas and pure rules only.',
  ),
  layer(
    'src/presets',
    ['http', 'services', 'pipeline', 'background', 'db', 'adapters', 'imaging', 'runtime'],
    'Presets are data and the rules that read it.',
  ),
  layer(
    'src/imaging',
    ['http', 'services', 'pipeline', 'background', 'db', 'adapters'],
    'Pixel algorithms depend on no outside system.',
  ),
  layer(
    'src/runtime',
    ['http', 'services', 'pipeline', 'background', 'db', 'imaging'],
    'Process tuning knows no product rules.',
  ),
  layer(
    'src/adapters',
    ['http', 'services', 'pipeline', 'background', 'db'],
    'An adapter wraps one outside system; the interfaces it implements live beside it or in src/domain.',
  ),
  layer(
    'src/db',
    ['http', 'services', 'pipeline', 'background', 'adapters', 'imaging', 'runtime'],
    'Repositories run queries and know no product rules.',
  ),
  layer(
    'src/pipeline',
    ['http', 'services', 'background', 'db'],
    'The pipeline turns pixels into results; services decide what they mean.',
  ),
  layer(
    'src/services',
    ['http', 'background'],
    'Services hold the rules; HTTP shapes are src/http, and domain types live in src/domain.',
    ['fastify', 'kysely', 'sharp', 'onnxruntime-node', 'node:fs', 'fs', 'node:fs/promises'],
  ),
  layer('src/background', ['http'], 'Background loops run services and the pipeline; they answer no HTTP.'),
  layer(
    'src/http',
    ['adapters', 'db', 'pipeline', 'imaging', 'runtime', 'background'],
    'Routes parse, call one service, and shape the reply: outside systems are reached through services.',
  ),
  {
    // The studio is a browser app on the public API: it reaches the server only through @matte/client,
    // never the server's own modules, and uses no Node built-ins.
    files: ['studio/**/*.ts', 'studio/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(src|test|bench|scripts)(/|$)',
              message: 'The studio talks to the API through @matte/client only.',
            },
            { regex: '^node:', message: 'The studio runs in the browser: no Node built-ins.' },
          ],
        },
      ],
    },
  },
  {
    // The unit tier answers in under a minute on a bare checkout: no model run, no database server, no
    // ../shared photos, no server process. What needs them lives in test/db, test/http or test/e2e.
    files: ['test/unit/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'onnxruntime-node', message: 'The model runs in the e2e tier (test/e2e/model/).' }],
          patterns: [
            {
              group: ['**/tools/shared-data*', '**/helpers/server*', '**/helpers/databases*'],
              message: 'Unit tests need no ../shared data, server process or database server: use test/e2e or test/db.',
            },
            {
              group: ['**/adapters/mask-model.adapter*', '**/adapters/model-*', '**/adapters/oip-*'],
              allowTypeImports: true,
              message: 'The model runs in the e2e tier (test/e2e/model/).',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read loosely typed JSON answers; `any` there is deliberate.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
);
