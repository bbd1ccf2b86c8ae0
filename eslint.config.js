import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// ARCHITECTURE.md "Layers" in lint: ESLint's own `no-restricted-imports`, one rule set per folder, with
// regular expressions over the import as written. Every import in the packages is relative and ends in `.js`
// (STYLE "Public API"), so the written path names the folder it reaches; no plugin or resolver is needed.

const CORE = 'packages/core/src';
/** The feature folders of @svc/core: every folder of src/ but the kernel, the app and the testing entry. */
const FEATURES = readdirSync(new URL(`./${CORE}/`, import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !['kernel', 'app', 'testing'].includes(entry.name))
  .map((entry) => entry.name)
  .sort();
/** Tests, their helpers and fixtures: outside the layering, and free to use `any`. */
const TEST_FILES = [
  '**/*.test.ts',
  '**/*.test.mjs',
  'testing/**',
  'test/**',
  `${CORE}/testing/**`,
  '**/__fixtures__/**',
  'packages/cli/.tmp-test/**',
];

const folderOf = (names) => `^(\\.\\./)+(${names.join('|')})/`;
const only = (module, where) => ({ name: module, message: `${module} is imported only in ${where}` });
const EXPRESS = only('express', 'packages/core/src/kernel/http/');
const WS = only('ws', 'packages/core/src/events/');
/** Test helpers: the core's public testing entry, the root testing/ folder, the hardening helpers. */
const TEST_HELPERS = {
  regex: '(^|/)(testing|test)(/|$)|^@svc/core/testing$',
  message: 'production code imports no test helper (they live in testing/ and ship in no package)',
};
const NO_APP = {
  regex: folderOf(['app']),
  message: 'only app/ (the composition root) and tests import app/',
};

/** One `no-restricted-imports` setting: flat config keeps the last one that matches a file, so each is whole. */
function restrict({ paths = [], patterns = [] }) {
  return { 'no-restricted-imports': ['error', { paths, patterns: [...patterns, TEST_HELPERS] }] };
}

const layers = [
  {
    // The kernel imports no feature and not the app; Express only in kernel/http.
    files: [`${CORE}/kernel/**/*.ts`],
    ignores: [`${CORE}/kernel/http/**`],
    rules: restrict({
      paths: [EXPRESS, WS],
      patterns: [
        {
          regex: folderOf(FEATURES),
          message: 'the kernel imports no feature: declare a port in kernel/ports.ts',
        },
        NO_APP,
      ],
    }),
  },
  {
    files: [`${CORE}/kernel/http/**/*.ts`],
    rules: restrict({
      paths: [WS],
      patterns: [
        {
          regex: folderOf(FEATURES),
          message: 'the kernel imports no feature: declare a port in kernel/ports.ts',
        },
        NO_APP,
      ],
    }),
  },
  // A feature imports the kernel and its own folder: another feature is reached through a port.
  ...FEATURES.map((feature) => ({
    files: [`${CORE}/${feature}/**/*.ts`],
    rules: restrict({
      paths: feature === 'events' ? [EXPRESS] : [EXPRESS, WS],
      patterns: [
        {
          regex: folderOf(FEATURES.filter((other) => other !== feature)),
          message: 'a feature imports no other feature: use a port of kernel/ports.ts',
        },
        {
          regex: '^\\.\\./kernel/http/',
          message: 'a feature speaks HTTP through kernel/router.ts and ctx; Express stays behind kernel/http',
        },
        NO_APP,
      ],
    }),
  })),
  {
    // The composition root and the public entries may import features, but not express, ws or test helpers.
    files: [
      `${CORE}/app/**/*.ts`,
      `${CORE}/*.ts`,
      'packages/cli/src/**/*.ts',
      'packages/migrations/src/**/*.ts',
    ],
    rules: restrict({ paths: [EXPRESS, WS] }),
  },
  {
    // @svc/client runs in browsers (docs/client.md): no server package, no Node-only library, no test helper.
    files: ['packages/client/src/**/*.ts'],
    rules: restrict({
      paths: [EXPRESS, WS],
      patterns: [
        {
          regex: '^@svc/(core|cli|migrations)(/|$)|^(\\.\\./)+(core|cli|migrations)/',
          message: '@svc/client depends on no other svc package: it speaks to the server over HTTP only',
        },
        { regex: '^node:', message: '@svc/client runs in browsers: no Node built-in' },
      ],
    }),
  },
  {
    // @svc/react (docs/react.md): React and @svc/client only, nothing from the server side or Node.
    files: ['packages/react/src/**/*.ts'],
    rules: restrict({
      paths: [EXPRESS, WS],
      patterns: [
        {
          regex: '^@svc/(core|cli|migrations)(/|$)|^(\\.\\./)+(core|cli|migrations|client)/',
          message: '@svc/react depends on @svc/client (by its name) and React only',
        },
        { regex: '^node:', message: '@svc/react runs in browsers: no Node built-in' },
      ],
    }),
  },
].map((layer) => ({ ...layer, ignores: [...(layer.ignores ?? []), ...TEST_FILES] }));

/**
 * `eslint-disable` of `no-explicit-any` must say why after ` -- ` (STYLE "Comments"): an `any` outside tests is
 * an exception a reader should be able to judge.
 */
const anyNeedsReason = {
  meta: {
    type: 'suggestion',
    schema: [],
    messages: { reason: 'say why `any` is needed here: `-- <reason>`' },
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          const text = comment.value.trim();
          if (/^eslint-disable(-next-line|-line)?\b/.test(text) && text.includes('no-explicit-any')) {
            const reason = text.split(/\s--\s/)[1]?.trim();
            if (!reason) context.report({ loc: comment.loc, messageId: 'reason' });
          }
        }
      },
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.tmp-test/**',
      'coverage/**',
      'examples/*/migrations/**',
      '**/migrations/auth/**',
    ],
  },
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
        AbortController: 'readonly',
        fetch: 'readonly',
        setImmediate: 'readonly',
      },
    },
    plugins: { svc: { rules: { 'any-needs-reason': anyNeedsReason } } },
    rules: {
      // An error outside tests; an exception carries an eslint-disable comment saying why (svc/any-needs-reason).
      '@typescript-eslint/no-explicit-any': 'error',
      'svc/any-needs-reason': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: TEST_FILES,
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...layers,
);
