/**
 * Jest reads this file through ts-node. Types are checked by `pnpm typecheck` (tsconfig.typecheck.json lists
 * this file), so ts-node only strips them: its type check took 3 to 4 s of every jest start.
 * @jest-config-loader-options {"transpileOnly": true}
 */
import type { Config } from 'jest';

// Tests run on the TypeScript sources as ESM (swc strips types; tsc checks them in `pnpm typecheck`).
const swc = [
  '@swc/jest',
  {
    jsc: { target: 'es2022', parser: { syntax: 'typescript' }, keepClassNames: true },
    module: { type: 'es6' },
  },
] as const;

const config: Config = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc as unknown as [string, Record<string, unknown>] },
  moduleNameMapper: {
    '^@svc/core$': '<rootDir>/packages/core/src/index.ts',
    '^@svc/core/internal$': '<rootDir>/packages/core/src/internal.ts',
    '^@svc/core/testing$': '<rootDir>/packages/core/src/testing/index.ts',
    '^@svc/migrations$': '<rootDir>/packages/migrations/src/index.ts',
    '^@svc/client$': '<rootDir>/packages/client/src/index.ts',
    '^@svc/react$': '<rootDir>/packages/react/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/packages/*/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30_000,
  maxWorkers: 2,
  // The longest files first, from durations recorded in the repository (testing/sequencer.mjs).
  testSequencer: '<rootDir>/testing/sequencer.mjs',
  // A worker is recycled after a test file that leaves its heap above this: test files loaded as ESM leave
  // their module graphs behind, and a heap grown over a hundred files makes garbage collection, and the heap
  // walk of events/sockets-memory.test.ts, take minutes (121 s for that file late in a CI run, 2 s alone).
  workerIdleMemoryLimit: '512MB',
};

export default config;
