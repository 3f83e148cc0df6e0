/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const transform: Config['transform'] = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
};

// Workspace packages resolve to their TypeScript sources, so tests never need a build first.
const moduleNameMapper: Config['moduleNameMapper'] = {
  '^@eventrelay/(config|runtime|stores|testkit)$': '<rootDir>/packages/$1/src/index.ts',
  '^(\\.{1,2}/.*)\\.js$': '$1',
};

const shared = { transform, moduleNameMapper, testEnvironment: 'node', rootDir: '.' } satisfies Config;

const config: Config = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/packages/*/src/**/*.test.ts',
        '<rootDir>/services/*/src/**/*.test.ts',
        '<rootDir>/test/repo/**/*.test.ts',
        '<rootDir>/bench/**/*.unit.test.ts',
      ],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: [
        '<rootDir>/services/*/test/**/*.int.test.ts',
        '<rootDir>/packages/*/test/**/*.int.test.ts',
        '<rootDir>/test/e2e/**/*.test.ts',
        // The docs' runnable examples, run for real (receiver-examples.test.ts).
        '<rootDir>/test/docs/**/*.test.ts',
        '<rootDir>/test/ops/**/*.test.ts',
        '<rootDir>/bench/**/*.int.test.ts',
      ],
      slowTestThreshold: 30,
    },
    {
      ...shared,
      // The web console in a real headless Chromium against the built services (docs/admin.md, Web console).
      displayName: 'browser',
      testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
      slowTestThreshold: 60,
    },
  ],
  testTimeout: 30_000,
};

export default config;
