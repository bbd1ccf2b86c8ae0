import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
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
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // STYLE "Dependency direction": express only in kernel/http, ws only in events.
    files: ['packages/core/src/**/*.ts'],
    ignores: [
      'packages/core/src/kernel/http/**',
      'packages/core/src/**/*.test.ts',
      'packages/core/src/testing/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'express', message: 'express stays in kernel/http' }] },
      ],
    },
  },
);
