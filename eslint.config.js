// ESLint: the recommended JavaScript and typescript-eslint rules (syntax only, no type information, so it stays fast)
// and React's hooks rules. `npm run lint` runs it; `npm test` runs it before the type check.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig([
  globalIgnores(['dist/', 'dist-*/', 'dev-dist/', 'test-results/', 'playwright-report/', 'data/', '.tmp/']),
  {
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      // The same code runs in the page, in workers and in node (tests, benchmarks, the command line).
      globals: { ...globals.browser, ...globals.worker, ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A variable that callbacks read before its one assignment (a connection's events) is declared with let, and should be.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // An argument or caught error named with a leading underscore is kept on purpose (an interface's signature, a callback's position).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/ui/**/*.{ts,tsx}', 'src/main.tsx'],
    extends: [reactHooks.configs.flat.recommended],
  },
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: { ...globals.serviceworker } },
  },
]);
