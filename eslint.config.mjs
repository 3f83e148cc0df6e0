// Lint with type information. The domain/ rule enforces the functional core: business rules
// import nothing that does I/O, so they stay pure and testable without Redis or HTTP.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const IO_MODULES = ['bullmq', 'ioredis', 'express', 'undici', 'pino', 'prom-client', '@eventrelay/runtime', '@eventrelay/stores'];
const NODE_IO = ['http', 'https', 'net', 'tls', 'dns', 'fs', 'fs/promises', 'child_process', 'cluster', 'dgram', 'worker_threads'];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'packages/config/src/generated/**',
      'packages/analytics-go/**',
      'bench/results/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { project: './tsconfig.eslint.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read the environment only through loadEnv in the composition root.',
        },
      ],
    },
  },
  {
    // The web console is browser code with a tsconfig of its own (DOM, JSX for Preact).
    files: ['packages/console/**/*.{ts,tsx}'],
    languageOptions: {
      globals: globals.browser,
      parserOptions: { project: './packages/console/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['**/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...IO_MODULES, ...NODE_IO, ...NODE_IO.map((m) => `node:${m}`)].map((name) => ({
            name,
            message: 'domain/ is pure: do I/O in adapters/ and pass results in.',
          })),
          patterns: [{ group: ['**/adapters/**', '**/http/**'], message: 'domain/ must not depend on adapters or http.' }],
        },
      ],
    },
  },
  {
    // Composition roots, tests, scripts and benches may read the environment.
    files: ['**/src/index.ts', '**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts', 'jest.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: globals.node } },
  { files: ['scripts/**', 'packages/*/scripts/**', 'examples/**'], rules: { 'no-restricted-syntax': 'off' } },
);
